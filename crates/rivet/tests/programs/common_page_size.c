// -z common-page-size equal to a 64 KiB maximum page: RELRO is padded to 64 KiB, and the RELRO
// segment must map that padding, since the loader makes the whole range read-only.
// ldflags: -Wl,-z,max-page-size=0x10000 -Wl,-z,common-page-size=0x10000
#include <stdio.h>
static const char *const names[] = {"one", "two"};
int value = 7;
int main(void) {
    printf("%s %s %d\n", names[0], names[1], value);
    return 0;
}
