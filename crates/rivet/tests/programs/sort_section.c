// --sort-section=name: input sections are ordered by name within each output section, so with
// -ffunction-sections the functions land in name order whatever order the sources define them in.
// cflags: -ffunction-sections -fdata-sections -O1
// ldflags: -Wl,--sort-section=name
#include <stdio.h>
__attribute__((noinline)) int zeta(int x) { return x + 3; }
__attribute__((noinline)) int beta(int x) { return x * 5; }
__attribute__((noinline)) int alpha(int x) { return x - 7; }
int alpha_v = 3, beta_v = 2, zeta_v = 1;
int main(void) {
    printf("%d\n", alpha(beta(zeta(1))));
    printf("code %s\n", (void *)alpha < (void *)beta && (void *)beta < (void *)zeta ? "sorted" : "unsorted");
    printf("data %s\n", &alpha_v < &beta_v && &beta_v < &zeta_v ? "sorted" : "unsorted");
    return 0;
}
