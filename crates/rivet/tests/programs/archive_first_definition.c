// Two members of one archive define the same strong symbol: the archive's symbol table lists both,
// and only the first is fetched (GNU ld and lld add a member the moment they fetch it, so the
// second entry finds the symbol defined). Fetching both would be a duplicate definition.
// prepare: ar rcs libdup.a first.o second.o
// link: main.o -L. -ldup
// check: nm-present first_only
// check: nm-absent second_only
#include <stdio.h>
int pick(void);
int main(void) {
    printf("%d\n", pick());
    return 0;
}
//--- first.c
int first_only;
int pick(void) { return 1 + first_only; }
//--- second.c
int second_only;
int pick(void) { return 2 + second_only; }
