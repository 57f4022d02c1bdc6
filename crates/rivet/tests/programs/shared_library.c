// A shared library used by the executable: functions, data (a copy relocation in the executable),
// TLS defined in the library and used from the executable, a callback into the executable.
// modes: pie no-pie
// shared: libshapes.so lib.c
// ldflags: -lshapes
#include <stdio.h>
extern int lib_counter;
extern const char lib_name[];
extern __thread int lib_tls;
int lib_add(int);
int lib_tls_bump(void);
int lib_apply(int (*fn)(int), int);
static int triple(int x) { return 3 * x; }
int main(void) {
    int a = lib_add(5);
    int b = lib_tls_bump();
    printf("%s: add=%d counter=%d tls=%d/%d apply=%d\n", lib_name, a, lib_counter, b, lib_tls, lib_apply(triple, 7));
    lib_counter = 100;
    printf("after write: %d\n", lib_add(1));
    return 0;
}
//--- lib.c
int lib_counter = 10;
const char lib_name[] = "libshapes";
__thread int lib_tls = 5;
static int hidden_helper(int x) { return x * 2; }
int lib_add(int x) { lib_counter += x; return hidden_helper(lib_counter); }
int lib_tls_bump(void) { return ++lib_tls; }
int lib_apply(int (*fn)(int), int v) { return fn(v) + 1; }
