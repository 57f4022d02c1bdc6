// -Bsymbolic: the library's own calls bind inside the library even though the executable defines a
// function of the same name; without it they would bind to the executable's.
// modes: pie no-pie
// shared: libsym.so sym.c -- -Wl,-Bsymbolic
// shared: libplain.so plain.c
// ldflags: -lsym -lplain
#include <stdio.h>
int which(void) { return 100; }
int sym_calls_which(void);
int plain_calls_other(void);
int other(void) { return 300; }
int main(void) {
    printf("symbolic: %d, interposed: %d\n", sym_calls_which(), plain_calls_other());
    return 0;
}
//--- sym.c
int which(void) { return 1; }
int sym_calls_which(void) { return which(); }
//--- plain.c
int other(void) { return 3; }
int plain_calls_other(void) { return other(); }
