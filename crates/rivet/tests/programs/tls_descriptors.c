// TLS descriptors (-mtls-dialect=gnu2) in a -fPIC object, relaxed to local-exec.
// prepare: gcc -c -fPIC -O1 -mtls-dialect=gnu2 desc.c -o desc.o
// targets: x86_64 (x86-64's TLS descriptor dialect (gnu2); tests/aarch64.rs covers AArch64's descriptors)
#include <stdio.h>
int bump(int);
extern __thread int desc_var;
int main(void) {
    printf("%d %d\n", bump(5), bump(7));
    return 0;
}
//--- desc.c
__thread int desc_var = 30;
static __thread int desc_local = 1;
int bump(int v) { desc_local += v; return desc_var + desc_local; }
