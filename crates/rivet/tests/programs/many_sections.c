// An object with more than 65279 sections (extended section numbering: e_shnum is 0 and section
// 0's sh_size holds the count; symbols in the high sections use SHN_XINDEX and .symtab_shndx).
// rivet read section 0's size as bytes and refused the object as overlapping. Each int is 4-aligned,
// as the C declaration says (AArch64's optimised loads of it need that).
// modes: pie static
// prepare: sh gen.sh > many.s && gcc -c many.s -o many.o
// link: main.o many.o
#include <stdio.h>
extern const int sym5, sym65300, sym69999;
int main(void) {
    printf("%d %d %d\n", sym5, sym65300, sym69999);
    return 0;
}
//--- gen.sh
i=0
while [ $i -lt 70000 ]; do
    printf '.section .rodata.s%d,"a",@progbits\n.p2align 2\n.globl sym%d\nsym%d: .long %d\n' $i $i $i $i
    i=$((i + 1))
done
