// .rodata.cst16 input sections of mixed alignment: the constant main.c's 8-aligned section holds
// first is loaded with movaps (16-byte alignment required) by vec.c, whose copy is in a 16-aligned
// section. Merging both copies into the 8-aligned one would crash the program, as it crashed a
// debug build of ripgrep; GNU ld and lld keep a merged section per alignment.
// cflags: -O1
// targets: x86_64 (x86-64 vector code)
#include <stdio.h>
long low_half(void);
// An 8-byte pad then an 8-aligned .rodata.cst16 holding the constant: its copy lands 8 bytes off a
// 16-byte boundary.
__asm__(".section .rodata.pad,\"a\",@progbits\n.balign 16\npad: .quad 7\n"
        ".section .rodata.cst16,\"aM\",@progbits,16\n.balign 8\n"
        "early: .quad 0x1111111111111111, 0x2222222222222222\n.text\n");
extern const long pad[], early[];
int main(void) {
    printf("%lx\n", low_half());
    printf("pad %ld early %lx\n", pad[0], early[1]);
    return 0;
}
//--- vec.c
__asm__(".section .rodata.cst16,\"aM\",@progbits,16\n.balign 16\n"
        ".Lc: .quad 0x1111111111111111, 0x2222222222222222\n"
        ".text\n.globl low_half\n.type low_half,@function\nlow_half:\n"
        "movaps .Lc(%rip), %xmm0\nmovq %xmm0, %rax\nret\n.size low_half, .-low_half\n");
