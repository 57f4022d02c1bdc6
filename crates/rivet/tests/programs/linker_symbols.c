// Symbols the linker defines: __ehdr_start (the ELF header), _end, _edata, __bss_start, etext,
// _GLOBAL_OFFSET_TABLE_, __init_array_start/end.
#include <stdio.h>
#include <string.h>
extern const char __ehdr_start[];
extern char _end[], _edata[], __bss_start[], etext[];
extern char _GLOBAL_OFFSET_TABLE_[];
typedef void (*fn)(void);
extern fn __init_array_start[], __init_array_end[];
int data_var = 5;
static char bss_var[1000];
__attribute__((constructor)) static void ctor(void) {}
int main(void) {
    printf("ehdr magic ok=%d class=%d\n", memcmp(__ehdr_start, "\177ELF", 4) == 0, __ehdr_start[4]);
    printf("order ok=%d %d %d %d\n", (char *)&data_var < _edata, _edata <= __bss_start + 64, bss_var >= __bss_start, bss_var + 1000 <= _end);
    printf("text before etext=%d got=%d\n", (char *)main < etext, _GLOBAL_OFFSET_TABLE_ != 0);
    printf("init_array entries>=1: %d\n", (int)(__init_array_end - __init_array_start) >= 1);
    return 0;
}
