// An object that asks for a non-default version of a library's symbol (`.symver foo, foo@ver1` on
// an undefined foo) binds to that version, while a plain reference gets the default one (ver2).
// rivet left the versioned reference undefined ("undefined symbol: foo@ver1").
// modes: pie no-pie
// shared: libvfoo.so lib.c -- -Wl,--version-script=lib.ver
// ldflags: -lvfoo
void foo(void);
void call_default(void);
__asm__(".symver foo, foo@ver1");
int main(void) {
    foo();
    call_default();
    return 0;
}
//--- other.c
void foo(void);
void call_default(void) { foo(); }
//--- lib.c
#include <stdio.h>
void foo1(void) { puts("foo at ver1"); }
void foo2(void) { puts("foo at ver2, the default"); }
__asm__(".symver foo1, foo@ver1");
__asm__(".symver foo2, foo@@ver2");
//--- lib.ver
ver1 { global: foo; local: *; };
ver2 { global: foo; } ver1;
