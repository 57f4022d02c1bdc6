// qsort/bsearch callbacks into the program, heavy malloc/free.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int main(void) {
    enum { N = 10000 };
    int *v = malloc(N * sizeof *v);
    unsigned s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 1103515245 + 12345;
        v[i] = (int)(s >> 8) % 100000;
    }
    qsort(v, N, sizeof *v, cmp);
    int key = v[N / 2];
    int *hit = bsearch(&key, v, N, sizeof *v, cmp);
    char **strs = malloc(1000 * sizeof *strs);
    for (int i = 0; i < 1000; i++) {
        strs[i] = malloc(32);
        snprintf(strs[i], 32, "item-%d", i);
    }
    size_t total = 0;
    for (int i = 0; i < 1000; i++) {
        total += strlen(strs[i]);
        free(strs[i]);
    }
    free(strs);
    printf("%d %d %d found=%d %zu\n", v[0], v[N / 2], v[N - 1], hit != NULL, total);
    free(v);
    return 0;
}
