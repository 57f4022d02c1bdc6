// --as-needed with --gc-sections: a library whose only user is a collected function is not
// needed (lld's rule: only live code counts); without --gc-sections it would be.
// no-structure: GNU ld settles --as-needed before collecting sections and keeps the library
// modes: pie no-pie
// cflags: -ffunction-sections
// shared: libdeadref.so lib.c
// ldflags: -Wl,--as-needed -Wl,--gc-sections -ldeadref
// check: not-needed libdeadref.so
#include <stdio.h>
int from_library(void);
int dead(void) { return from_library(); }
int main(void) {
    puts("only main is live");
    return 0;
}
//--- lib.c
int from_library(void) { return 42; }
