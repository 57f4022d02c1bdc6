// A 64 MiB .bss array, a page-aligned one, and data after them.
#include <stdint.h>
#include <stdio.h>
static char huge[64 << 20];
char page_aligned[100] __attribute__((aligned(4096)));
int initialised = 1234;
int main(void) {
    huge[0] = 1;
    huge[sizeof huge - 1] = 2;
    long sum = 0;
    for (unsigned i = 0; i < sizeof huge; i += 4096) sum += huge[i];
    printf("%ld %d aligned=%d %d\n", sum, huge[sizeof huge - 1], (int)((uintptr_t)page_aligned % 4096), initialised);
    return 0;
}
