// -ffunction-sections -fdata-sections with --gc-sections: dead code goes, live code runs.
// cflags: -ffunction-sections -fdata-sections -O1
// ldflags: -Wl,--gc-sections
// check: nm-absent never_called
#include <stdio.h>
int used(int x) { return x * 3; }
int never_called(int x) { return x - 3; }
int used_data = 14;
int unused_data = 99;
int main(void) {
    printf("%d\n", used(used_data));
    return 0;
}
