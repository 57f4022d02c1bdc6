// --no-relax: GOT loads of local symbols keep their GOT entries (the program runs the same); the
// default relaxes them to lea.
// cflags: -fPIC
// ldflags: -Wl,--no-relax
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
