// Cross references between objects; static functions with the same name in two files.
#include <stdio.h>
int twice(int);
const char *who(void);
static int helper(int x) { return x + 1; }
int main(void) {
    printf("%d %d %s\n", helper(1), twice(21), who());
    return 0;
}
//--- other.c
static int helper(int x) { return x * 100; }
int twice(int x) { return 2 * x + helper(0); }
const char *who(void) { return "other.c"; }
