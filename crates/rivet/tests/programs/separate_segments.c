// -z separate-loadable-segments (each PT_LOAD starts a maximum-size page of the file, as in lld;
// GNU ld warns that it ignores it) with a 64 KiB maximum page: the program loads and runs as GNU
// ld's build.
// ldflags: -Wl,-z,max-page-size=0x10000 -Wl,-z,separate-loadable-segments
#include <stdio.h>
int twice(int x);
static const char *const words[] = {"read-only", "after", "relocation"};
int data = 21;
int main(void) {
    printf("%s %s %s %d\n", words[0], words[1], words[2], twice(data));
    return 0;
}
//--- extra.c
int twice(int x) { return 2 * x; }
