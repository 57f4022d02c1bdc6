// gcc -gz=zlib-gnu: the old GNU form (.zdebug_* sections, "ZLIB" + size + zlib stream), renamed
// to .debug_* and decompressed on input; addr2line maps both functions.
// cflags: -g -O0 -gz=zlib-gnu
// check: addr2line main main.c:8
// check: addr2line cube other.c:1
#include <stdio.h>
int cube(int);
int main(void) {
    printf("%d\n", cube(3));
    return 0;
}
//--- other.c
int cube(int x) { return x * x * x; }
