// A -g build: addr2line maps main's address to this file and line.
// cflags: -g -O0
// check: addr2line main main.c:6
#include <stdio.h>
int square(int x) { return x * x; }
int main(void) {
    printf("%d\n", square(7));
    return 0;
}
