// A section aligned beyond the page (16 KiB) in RELRO data: its segment's p_align grows to match,
// so the address stays aligned wherever a PIE is loaded (p_align stayed at the page before, and
// the alignment then held only when the loader happened to pick a suitably aligned base).
// check: segment-align .data.rel.ro 16384
// check: segment-align .bss 32768
#include <stdint.h>
#include <stdio.h>
__attribute__((section(".data.rel.ro.big"), aligned(16 * 1024))) const char *const big = "aligned";
__attribute__((aligned(32 * 1024))) char buffer[10];
__thread char tls_byte;
int main(void) {
    // Read through a volatile pointer: an optimising build must keep `big` (and its section).
    const char *text = *(const char *const volatile *)&big;
    printf("%s %lu %lu\n", text, (unsigned long)((uintptr_t)&big % (16 * 1024)),
           (unsigned long)((uintptr_t)buffer % (32 * 1024)));
    return tls_byte;
}
