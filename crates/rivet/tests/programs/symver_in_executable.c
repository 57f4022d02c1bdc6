// A `.symver` name with a version no version script defines (`alias@V1`), in an executable: it only
// names the symbol, as GNU ld and lld link it (rivet refused: "has undefined version V1"; a COMDAT
// group signed by such a name is how mold's suite met it).
#include <stdio.h>
int real(void) { return 7; }
__asm__(".symver real, alias@V1");
int main(void) {
    printf("%d\n", real());
    return 0;
}
