// TLS: local-exec, initial-exec (extern), general/local-dynamic from a -fPIC object (relaxed to
// local-exec), in four threads each with its own copy.
// cflags: -pthread -O1
// ldflags: -pthread
// prepare: gcc -c -fPIC -O1 pic.c -o pic.o
#include <pthread.h>
#include <stdio.h>
__thread int counter = 5;
__thread char block[100] __attribute__((aligned(64)));
extern __thread int shared_tls;
int pic_get(void);
void pic_add(int);
static void *worker(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < 1000; i++) counter++;
    shared_tls += (int)id;
    pic_add((int)id * 10);
    block[5] = (char)id;
    return (void *)(long)(counter + shared_tls + pic_get() + block[5]);
}
int main(void) {
    pthread_t t[4];
    long r[4];
    for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, (void *)i);
    for (int i = 0; i < 4; i++) {
        void *v;
        pthread_join(t[i], &v);
        r[i] = (long)v;
    }
    printf("%ld %ld %ld %ld main: %d %d %d aligned=%d\n", r[0], r[1], r[2], r[3], counter, shared_tls, pic_get(),
           (int)((unsigned long)block % 64));
    return 0;
}
//--- pic.c
// compiled like the rest, but forced PIC below so general- and local-dynamic TLS appear
__thread int shared_tls = 100;
static __thread int local_a = 7, local_b = 11;
int pic_get(void) { return shared_tls + local_a + local_b; }
void pic_add(int v) { local_a += v; local_b -= v; }
