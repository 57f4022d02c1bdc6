// --as-needed drops a library nothing uses from DT_NEEDED; the used one stays.
// modes: pie no-pie
// shared: libused.so used.c
// shared: libunused.so unused.c
// ldflags: -Wl,--as-needed -lunused -lused -Wl,--no-as-needed
// check: needed libused.so
// check: not-needed libunused.so
#include <stdio.h>
int used(void);
int main(void) {
    printf("%d\n", used());
    return 0;
}
//--- used.c
int used(void) { return 7; }
//--- unused.c
int unused(void) { return 8; }
