// A COMDAT group signed by a local symbol in one object (a.s: the assembler makes an undefined
// signature local) and by a global symbol in the other (b.s): both are the same group, and the
// first object on the command line keeps it, as in GNU ld. Here b.o comes first (its copy says 2).
// prepare: gcc -c a.s b.s
// link: main.o b.o a.o
#include <stdio.h>
int in_group(void);
int main(void) {
    printf("%d\n", in_group());
    return 0;
}
//--- a.s
.section .text.grp,"axG",@progbits,grp_sig,comdat
.globl in_group
.type in_group,@function
in_group:
    movl $1, %eax
    ret
//--- b.s
.text
.globl grp_sig
grp_sig:
    ret
.section .text.grp,"axG",@progbits,grp_sig,comdat
.globl in_group
.type in_group,@function
in_group:
    movl $2, %eax
    ret
