// Local-dynamic TLS through TLS descriptors (-mtls-dialect=gnu2 -ftls-model=local-dynamic): the
// descriptor call against _TLS_MODULE_BASE_ is relaxed to local-exec in an executable, and each
// variable's x@dtpoff is added to it. _TLS_MODULE_BASE_@tpoff must be 0 there (as lld has it):
// rivet counted the TLS block's offset twice and read the wrong slot (printed 42 0).
// (desc.c is compiled here as a library's code would be: the test's own -fPIE would turn the
// sequences into local-exec before the linker sees them.)
// prepare: gcc -c -fPIC -ftls-model=local-dynamic -mtls-dialect=gnu2 desc.c -o desc_ld.o
// link: main.o desc_ld.o
// targets: x86_64 (x86-64's TLS descriptor dialect (gnu2))
#include <stdio.h>
_Thread_local int foo;
int get_foo(void);
int get_bar(void);
int main(void) {
    foo = 42;
    printf("%d %d\n", get_foo(), get_bar());
    return 0;
}
//--- desc.c
extern _Thread_local int foo;
int get_foo(void) { return foo; }
static _Thread_local int bar = 5;
static _Thread_local char big[3000];
int get_bar(void) { return bar + big[2999]; }
