// A shared library without DT_SONAME named by its path on the command line: DT_NEEDED holds the path
// as written (`sub/libpath.so`), as GNU ld and lld record it, so the loader finds it from the
// program's directory; the base name alone would not be found.
// modes: pie no-pie
// prepare: mkdir -p sub ref/sub out/sub && gcc -shared -fPIC lib.c -o sub/libpath.so && cp sub/libpath.so ref/sub/ && cp sub/libpath.so out/sub/
// link: main.o sub/libpath.so
// check: needed sub/libpath.so
#include <stdio.h>
int from_library(void);
int main(void) {
    printf("library says %d\n", from_library());
    return 0;
}
//--- lib.c
int from_library(void) { return 42; }
