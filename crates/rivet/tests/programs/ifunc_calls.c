// IFUNC calls in every mode (no pointer comparison): direct, through a pointer, from another object.
#include <stdio.h>
#include <stdlib.h>
static long sum_plain(long n) { long s = 0; for (long i = 1; i <= n; i++) s += i; return s; }
static long sum_formula(long n) { return n * (n + 1) / 2; }
// A resolver runs while a static PIE relocates itself, before libc's own IFUNCs (strlen, which
// getenv calls) are resolved: it may read only its own data.
static volatile int choose_slow;
static void *pick(void) { return choose_slow ? sum_plain : sum_formula; }
long sum_to(long) __attribute__((ifunc("pick")));
long call_from_other(long);
int main(void) {
    long (*p)(long) = sum_to;
    printf("%ld %ld %ld\n", sum_to(10), p(100), call_from_other(1000));
    return 0;
}
//--- other.c
long sum_to(long);
long call_from_other(long n) { return sum_to(n); }
