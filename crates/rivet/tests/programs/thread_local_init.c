// _Thread_local with initialisers and a 64-aligned block larger than a page.
// cflags: -pthread
// ldflags: -pthread
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
_Thread_local int tl_value = 99;
_Thread_local struct { char pad[5000]; int x; } tl_big __attribute__((aligned(64))) = {{0}, 7};
static void *run(void *arg) {
    tl_value += (int)(intptr_t)arg;
    tl_big.x *= 2;
    return (void *)(intptr_t)(tl_value + tl_big.x + (int)((uintptr_t)&tl_big % 64));
}
int main(void) {
    pthread_t t;
    void *r;
    pthread_create(&t, 0, run, (void *)1);
    pthread_join(t, &r);
    printf("%ld %d %d\n", (long)(intptr_t)r, tl_value, tl_big.x);
    return 0;
}
