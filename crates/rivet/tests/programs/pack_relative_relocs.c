// Packed relative relocations (-z pack-relative-relocs): the pointers below need RELATIVE
// relocations in a PIE, a static PIE and a shared library; they go to .relr.dyn (DT_RELR), and
// the program needs glibc's GLIBC_ABI_DT_RELR, as with GNU ld (the readelf facts compared with
// GNU ld's build include both). Runs of consecutive words (the table) pack into bitmaps; a word
// at an odd offset of a packed struct stays in .rela.dyn.
// ldflags: -Wl,-z,pack-relative-relocs
// cflags: -fPIC
// targets: x86_64 (the cross GNU ld 2.40 has no -z pack-relative-relocs for AArch64: no reference)
#include <stdio.h>
static int a = 1, b = 2, c = 3;
int *ptrs[] = {&a, &b, &c, &a, &b, &c, &a, &b, &c, &a, &b, &c, 0};
static const char *names[] = {"one", "two", "three"};
struct __attribute__((packed)) odd {
    char pad;
    int *p;
};
struct odd odd = {0, &b};
static int (*fn)(const char *, ...) = printf;
int main(void) {
    int sum = 0;
    for (int i = 0; ptrs[i]; i++)
        sum += *ptrs[i];
    fn("%d %s %s %s %d\n", sum, names[0], names[1], names[2], *odd.p);
    return 0;
}
