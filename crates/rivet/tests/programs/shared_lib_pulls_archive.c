// A shared library's undefined symbol fetches the archive member that defines it, as an object's
// reference would (GNU ld and lld do): libneedsfoo.so uses `foo`, which only the archive given
// after it defines; the executable then exports foo for the library. rivet left the member out and
// the program failed at start with "undefined symbol: foo".
// modes: pie no-pie
// shared: libneedsfoo.so lib.c
// prepare: ar rcs libfoo.a foo.o
// link: main.o -lneedsfoo libfoo.a
#include <stdio.h>
extern int bar;
int baz(void);
int main(void) {
    printf("%d %d\n", bar, baz());
    return 0;
}
//--- lib.c
extern int foo;
int bar = 5;
int baz(void) { return foo; }
//--- foo.c
int foo = 3;
