// A global symbol defined only inside a COMDAT copy that is discarded (b.o's group g, because a.o
// brought g first and its copy does not define `gsig`), and referenced by no relocation: GNU ld
// and lld link this without a word; it is not an undefined symbol.
// prepare: gcc -c a.s b.s
// link: main.o a.o b.o
// targets: x86_64 (x86-64 assembly)
#include <stdio.h>
int in_g(void);
int main(void) {
    printf("%d\n", in_g());
    return 0;
}
//--- a.s
.section .text.g,"axG",@progbits,gsig,comdat
.globl in_g
.type in_g,@function
in_g:
    movl $1, %eax
    ret
//--- b.s
.section .text.g,"axG",@progbits,gsig,comdat
.globl in_g
.type in_g,@function
.globl gsig
gsig:
in_g:
    movl $2, %eax
    ret
