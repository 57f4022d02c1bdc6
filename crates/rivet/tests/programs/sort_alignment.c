// --sort-section=alignment: input sections are ordered by alignment, largest first, within each
// output section (GNU ld's SORT_BY_ALIGNMENT), which keeps padding small.
// cflags: -fdata-sections -O1
// ldflags: -Wl,--sort-section=alignment
#include <stdio.h>
char small_a[3] = {1, 2, 3};
__attribute__((aligned(64))) char big[64] = {4};
char small_b[5] = {5};
__attribute__((aligned(16))) char mid[16] = {6};
int main(void) {
    printf("%d\n", small_a[0] + big[0] + small_b[0] + mid[0]);
    printf("%s\n", (void *)big < (void *)mid && (void *)mid < (void *)small_a && (void *)mid < (void *)small_b
                       ? "largest alignment first" : "other order");
    return 0;
}
