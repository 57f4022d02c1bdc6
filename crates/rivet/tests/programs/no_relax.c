// --no-relax: GOT loads of local symbols keep their GOT entries (the program runs the same); the
// default relaxes them to lea.
// cflags: -fPIC
// ldflags: -Wl,--no-relax
// A static PIE relaxes them all the same: its start-up code runs GOT loads before anything has
// relocated the GOT (`_start` calls `__libc_start_main` through its entry), so it crashed unrelaxed.
// GNU ld 2.40's static PIE crashes so; its reference build relaxes.
// gnu-ldflags: -Wl,--relax
#include <stdio.h>
extern char *msg;
int counter;
int main(void) {
    counter += 2;
    printf("%s %d\n", msg, counter);
    return 0;
}
//--- msg.c
char *msg = "Hello world";
