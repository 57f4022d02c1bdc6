// --wrap=SYM: references to malloc and to compute go to __wrap_*, __real_* reach the originals; the
// file defining compute keeps calling its own definition (GNU ld renames undefined references only).
// ldflags: -Wl,--wrap=malloc -Wl,--wrap=compute
#include <stdio.h>
#include <stdlib.h>
void *__real_malloc(size_t);
static int wrapped_mallocs;
void *__wrap_malloc(size_t n) {
    wrapped_mallocs++;
    return __real_malloc(n);
}
int compute(int);
int __real_compute(int);
int __wrap_compute(int x) { return __real_compute(x) + 1000; }
int direct_from_definer(int);
int main(void) {
    char *p = malloc(32);
    snprintf(p, 32, "%d", compute(5));
    printf("%s %d %d\n", p, direct_from_definer(5), wrapped_mallocs > 0);
    free(p);
    return 0;
}
//--- compute.c
int compute(int x) { return x * 7; }
int direct_from_definer(int x) { return compute(x); }
