// --allow-multiple-definition (also -z muldefs): two strong definitions of one symbol are no error;
// the first on the command line is used, by every reference (GNU ld and lld).
// ldflags: -Wl,--allow-multiple-definition
#include <stdio.h>
int pick(void) { return 1; }
int from_other(void);
int main(void) {
    printf("%d %d\n", pick(), from_other());
    return 0;
}
//--- other.c
int pick(void) { return 2; }
int from_other(void) { return pick() * 10; }
