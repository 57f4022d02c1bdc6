// -Ttext, -Tdata and -Tbss put those output sections at the given (hexadecimal) addresses; the
// sections after each follow it. (Fixed-address modes only: in a PIE the addresses move with the
// load address. The addresses are 4 KiB pages apart: with 2 MiB pages they would share pages.)
// modes: no-pie static
// ldflags: -Wl,-z,max-page-size=0x1000 -Wl,-Ttext=500000 -Wl,-Tdata=0x800000 -Wl,--section-start=.bss=0x900000
// targets: x86_64 (the cross GNU ld 2.40 makes this layout's segment writable and executable (RWE); rivet does not)
#include <stdint.h>
#include <stdio.h>
int data_var = 42;
int bss_var;
static const char *where(uintptr_t a, uintptr_t lo, uintptr_t hi) {
    return a >= lo && a < hi ? "in range" : "OUT OF RANGE";
}
int main(void) {
    bss_var = data_var + 1;
    printf("main %s\n", where((uintptr_t)&main, 0x500000, 0x600000));
    printf("data %s\n", where((uintptr_t)&data_var, 0x800000, 0x900000));
    printf("bss %s %d\n", where((uintptr_t)&bss_var, 0x900000, 0xa00000), bss_var);
    return 0;
}
