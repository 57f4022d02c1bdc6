// -O2 -g across two objects.
// cflags: -O2 -g
#include <stdio.h>
unsigned long fib(unsigned n);
int main(void) {
    for (unsigned i = 0; i < 50; i += 7) printf("fib(%u)=%lu\n", i, fib(i));
    return 0;
}
//--- fib.c
unsigned long fib(unsigned n) {
    unsigned long a = 0, b = 1;
    while (n--) {
        unsigned long t = a + b;
        a = b;
        b = t;
    }
    return a;
}
