// COMDAT groups signed by a local symbol in one object (the assembler makes an undefined signature
// local) and by a global symbol in the other are the same group, and the first object on the
// command line keeps it, as in GNU ld. Group g1 comes first signed by a local symbol (a.o), g2
// first signed by a global one (a.o too): a.o's copies must win both (they say 1 and 3; b.o's 2
// and 4).
// prepare: gcc -c a.s b.s
// link: main.o a.o b.o
// targets: x86_64 (x86-64 assembly)
#include <stdio.h>
int in_g1(void);
int in_g2(void);
int main(void) {
    printf("%d %d\n", in_g1(), in_g2());
    return 0;
}
//--- a.s
.section .text.g1,"axG",@progbits,g1_sig,comdat
.globl in_g1
.type in_g1,@function
in_g1:
    movl $1, %eax
    ret
.text
.globl g2_sig
g2_sig:
    ret
.section .text.g2,"axG",@progbits,g2_sig,comdat
.globl in_g2
.type in_g2,@function
in_g2:
    movl $3, %eax
    ret
//--- b.s
.text
.globl g1_sig
g1_sig:
    ret
.section .text.g1,"axG",@progbits,g1_sig,comdat
.globl in_g1
.type in_g1,@function
in_g1:
    movl $2, %eax
    ret
.section .text.g2,"axG",@progbits,g2_sig,comdat
.globl in_g2
.type in_g2,@function
in_g2:
    movl $4, %eax
    ret
