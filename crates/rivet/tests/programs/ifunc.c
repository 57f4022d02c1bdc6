// IFUNC: a resolver picks the implementation; direct calls, calls through a pointer taken in
// another object, and pointer equality across objects. Not in a PIE, dynamic or static: there GNU
// ld makes the two pointers differ (the GOT holds the resolved function, the direct reference the
// PLT stub) while rivet keeps them equal as C requires, so the outputs cannot be compared
// (ifunc_calls.c covers calls in every mode).
// modes: static no-pie
#include <stdio.h>
#include <stdlib.h>
static int impl_fast(int x) { return x * 2; }
static int impl_slow(int x) { return x + x; }
// A resolver runs while a static PIE relocates itself, before libc's own IFUNCs (strlen, which
// getenv calls) are resolved: it may read only its own data.
static volatile int choose_slow;
static void *resolve_double(void) { return choose_slow ? impl_slow : impl_fast; }
int dbl(int) __attribute__((ifunc("resolve_double")));
static int local_impl(void) { return 7; }
static void *resolve_local(void) { return local_impl; }
static int local_ifunc(void) __attribute__((ifunc("resolve_local")));
int (*pointer_from_other(void))(int);
int main(void) {
    int (*p)(int) = dbl;
    printf("%d %d %d same=%d local=%d\n", dbl(21), p(4), pointer_from_other()(5), p == pointer_from_other(), local_ifunc());
    return 0;
}
//--- other.c
int dbl(int);
int (*pointer_from_other(void))(int) { return dbl; }
