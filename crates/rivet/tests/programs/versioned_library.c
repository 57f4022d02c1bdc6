// A shared library with a version script and .symver: foo@V1 (old, hidden) and foo@@V2 (default),
// api_* exported at V1, everything else local; the executable binds foo@@V2.
// modes: pie no-pie
// shared: libv.so vlib.c -- -Wl,--version-script=vlib.map -Wl,--no-undefined-version
// ldflags: -lv
#include <stdio.h>
int foo(void);
int api_open(void);
int main(void) {
    printf("foo=%d api_open=%d\n", foo(), api_open());
    return 0;
}
//--- vlib.c
int foo_v1(void) { return 1; }
int foo_v2(void) { return 2; }
__asm__(".symver foo_v1, foo@V1");
__asm__(".symver foo_v2, foo@@V2");
int api_open(void) { return 10; }
int internal_helper(void) { return 99; }
//--- vlib.map
V1 { global: api_*; local: *; };
V2 { global: foo; } V1;
