// --gc-sections and sections named like C identifiers: one whose __start_/__stop_ symbols live code
// uses is kept, one nothing refers to is collected (it was kept as a root whatever it held).
// ldflags: -Wl,--gc-sections
// check: nm-absent dead_data
// check: nm-present live_data
#include <stdio.h>
__attribute__((section("dead_sec"), used)) int dead_data = 42;
__attribute__((section("live_sec"), used)) int live_data[] = {99, 100};
extern int __start_live_sec[], __stop_live_sec[];
int main(void) {
    int sum = 0;
    for (int *p = __start_live_sec; p < __stop_live_sec; p++)
        sum += *p;
    printf("%ld %d\n", (long)(__stop_live_sec - __start_live_sec), sum);
    return 0;
}
