// IFUNCs across modules. The executable defines `foo` as an IFUNC that libgetfoo.so takes the
// address of: the executable exports it as a plain function at its PLT entry, so both modules see
// one address. libgetfoo.so defines the IFUNC `bar`, which the executable calls, takes the
// address of and finds with dlsym: imported, it is a plain function in the executable's .dynsym.
// (rivet exported both as STT_GNU_IFUNC: the loader then ran the PLT entry as a resolver and the
// program crashed.) Fixed-address only: GNU ld's PIE exports `foo` as an IFUNC, which the loader
// refuses ("unsatisfiable circular dependency"), so there is nothing to compare with.
// modes: no-pie
// shared: libgetfoo.so lib.c
// ldflags: -lgetfoo
// targets: x86_64 (the cross GNU ld 2.40 gives the executable and the library two addresses for foo (prints 0 0 1): no reference; tests/aarch64.rs covers IFUNCs there)
#include <dlfcn.h>
#include <stdio.h>
typedef void Func(void);
static void real_foo(void) { printf("foo "); }
static Func *resolve_foo(void) { return real_foo; }
__attribute__((ifunc("resolve_foo"))) void foo(void);
Func *get_foo(void);
void bar(void);
int main(void) {
    void *self = dlopen(NULL, RTLD_NOW);
    Func *foo_by_name = (Func *)dlsym(self, "foo");
    Func *bar_by_name = (Func *)dlsym(self, "bar");
    foo();
    foo_by_name();
    bar();
    bar_by_name();
    printf("\n%d %d %d\n", foo == get_foo(), foo == foo_by_name, bar == bar_by_name);
    return 0;
}
//--- lib.c
#include <stdio.h>
typedef void Func(void);
void foo(void);
Func *get_foo(void) { return foo; }
static void real_bar(void) { printf("bar "); }
static Func *resolve_bar(void) { return real_bar; }
__attribute__((ifunc("resolve_bar"))) void bar(void);
