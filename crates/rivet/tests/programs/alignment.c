// Over-aligned data and _Alignof.
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
struct wide { alignas(64) char c; };
static struct wide w[3] = {{'a'}, {'b'}, {'c'}};
alignas(256) static int table[4] = {1, 2, 3, 4};
static alignas(32) char zeroes[33];
int main(void) {
    printf("%zu %d %d %d %c%c%c %d\n", _Alignof(struct wide), (int)((uintptr_t)w % 64), (int)((uintptr_t)table % 256),
           (int)((uintptr_t)zeroes % 32), w[0].c, w[1].c, w[2].c, table[3] + zeroes[32]);
    return 0;
}
