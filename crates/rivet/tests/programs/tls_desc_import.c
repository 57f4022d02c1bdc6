// An executable reaching a shared library's TLS variables through TLS descriptors (use.c compiled
// with -fPIC -mtls-dialect=gnu2, as a library's code would be): relaxed to initial-exec, a
// TPOFF64 GOT entry each (`lea x@tlsdesc(%rip)` becomes `mov x@gottpoff(%rip)`, the call a nop).
// rivet refused descriptors for a library's variables.
// modes: pie no-pie
// shared: libtdimp.so lib.c
// ldflags: -ltdimp
// prepare: gcc -c -fPIC -mtls-dialect=gnu2 use.c -o use.o
// targets: x86_64 (x86-64's TLS descriptor dialect (gnu2); tests/aarch64.rs covers AArch64's descriptors)
#include <stdio.h>
extern __thread int imp_tls;
int use_get(void);
long use_add(int);
int main(void) {
    printf("%d %ld %ld %d %d\n", use_get(), use_add(3), use_add(4), use_get(), imp_tls);
    return 0;
}
//--- use.c
extern __thread int imp_tls;
extern __thread long imp_arr[4];
static __thread int own = 100;
int use_get(void) { return imp_tls + own; }
long use_add(int v) {
    imp_arr[2] += v;
    imp_tls += v;
    own++;
    return imp_arr[2] * 10 + imp_tls;
}
//--- lib.c
__thread int imp_tls = 11;
__thread long imp_arr[4] = {1, 2, 3, 4};
