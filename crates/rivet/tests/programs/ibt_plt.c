// An IBT-enabled PLT (-z ibtplt, objects built with -fcf-protection=full): calls to libc go through
// `.plt.sec` entries (`endbr64; jmp *slot`) whose lazy stubs in `.plt` start with `endbr64`; a libc
// function's address taken in a non-PIE executable is its canonical `.plt.sec` entry; an IFUNC is
// called through the PLT (the IRELATIVE slot in static links). With LD_BIND_NOW and without.
// cflags: -fcf-protection=full
// ldflags: -Wl,-z,ibtplt
// targets: x86_64 (x86-64's IBT)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int twice(int x) { return 2 * x; }
static int thrice(int x) { return 3 * x; }
// The resolver runs before libc is set up in static links: it reads only a global.
static volatile int pick_thrice;
static void *resolve_scale(void) { return pick_thrice ? thrice : twice; }
int scale(int) __attribute__((ifunc("resolve_scale")));
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
size_t (*len_of(void))(const char *);
int main(int argc, char **argv) {
    (void)argv;
    int v[] = {5, 3, 9, 1};
    qsort(v, 4, sizeof v[0], cmp);
    size_t (*len)(const char *) = strlen;
    char buf[32];
    snprintf(buf, sizeof buf, "%d%d%d%d", v[0], v[1], v[2], v[3]);
    printf("%s %zu %zu same=%d scale=%d\n", buf, len(buf), len_of()("four"), len == len_of(), scale(argc + 20));
    puts("done");
    return 0;
}
//--- other.c
#include <string.h>
size_t (*len_of(void))(const char *) { return strlen; }
