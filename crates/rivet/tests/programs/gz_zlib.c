// gcc -gz=zlib (SHF_COMPRESSED, zlib) in both files: decompressed on input; addr2line maps both
// functions. (The old GNU .zdebug_* form is covered by gz_zlib_gnu.c.)
// cflags: -g -O0 -gz=zlib
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
