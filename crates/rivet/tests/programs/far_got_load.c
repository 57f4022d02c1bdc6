// A GOT load (R_X86_64_REX_GOTPCRELX: the weak declarations make even PIE code load the addresses
// from the GOT) of a symbol more than 2 GiB away: a 4 GB array sits between the code and `bar`, so
// the load cannot become a PC-relative lea and must keep its GOT entry (rivet relaxed it, then
// failed with "relocation out of range"; GNU ld asks for --no-relax, lld keeps the GOT entry). A dynamic PIE only: fixed-address code
// cannot hold addresses past 4 GiB in 32 bits, and a static libc could not reach its own data.
// modes: pie
// gnu-ldflags: -Wl,--no-relax
#include <stdio.h>
extern char foo[4000L * 1000 * 1000] __attribute__((weak));
extern char bar[1000 * 1000] __attribute__((weak));
int main(void) {
    bar[999] = 4;
    foo[3999L * 1000 * 1000] = 5;
    printf("%d %d %d\n", foo[0], bar[999], foo[3999L * 1000 * 1000]);
    return 0;
}
//--- data.c
char foo[4000L * 1000 * 1000];
char bar[1000 * 1000];
