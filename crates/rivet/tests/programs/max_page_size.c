// -z max-page-size above the 4 KiB page, with RELRO data (a const pointer table, .init_array, the
// GOT), writable data and bss: the program must load (PT_GNU_RELRO must not reach past what its
// segment maps, or the loader fails with "cannot apply additional memory protection after
// relocation"), and without -z separate-code the file must not be padded by whole maximum-size
// pages (segments' addresses only keep congruent to their offsets). The whole suite runs again
// with a 2 MiB page and separate code (scripts/test.sh).
// ldflags: -Wl,-z,max-page-size=0x200000 -Wl,-z,relro -Wl,-z,noseparate-code
// check: file-smaller-than 2097152
#include <stdio.h>
#include <stdlib.h>
static const char *const table[] = {"relro", "data", "bss"};
int counter = 3;
static char zeroed[100000];
static int ran;
__attribute__((constructor)) static void init(void) { ran = 1; }
int main(void) {
    zeroed[99999] = 1;
    printf("%s %s %s %d %d %d\n", table[0], table[1], table[2], counter, zeroed[99999], ran);
    return abs(counter) - 3;
}
