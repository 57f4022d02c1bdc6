// -mcmodel=large: calls go through R_X86_64_PLTOFF64 (the PLT entry, or the function itself when it
// binds locally, relative to the GOT), addresses through R_X86_64_GOTOFF64 / GOT64 / GOTPC64, and
// two 3 GiB arrays put data beyond 32-bit reach. Dynamic modes only: a static libc's small-model
// code could not reach its own data past the arrays.
// modes: pie no-pie
// cflags: -mcmodel=large
// targets: x86_64 (x86-64's large code model)
#include <stdio.h>
#include <string.h>
char arr1[0xc0000000];
extern char arr2[0xc0000000];
static int local_helper(int x) { return x * 3; }
int other(int x);
int main(void) {
    arr1[5] = 7;
    arr2[0xbfffffff] = 9;
    printf("%d %lx %d %d\n", (void *)arr1 < (void *)arr2, (unsigned long)(arr2 - arr1), arr1[5] + arr2[0xbfffffff],
           local_helper(other(2)));
    puts(strchr("large model", 'm'));
    return 0;
}
//--- other.c
char arr2[0xc0000000];
int other(int x) { return x + 1; }
