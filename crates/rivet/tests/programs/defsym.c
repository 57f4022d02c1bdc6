// --defsym=SYM=NUMBER makes an absolute symbol, --defsym=SYM=OTHER an alias of OTHER's definition.
// (In a PIE, GNU ld and rivet both resolve a PC-relative reference to an absolute symbol relative
// to the load address, so only the fixed-address modes print a stable value.)
// modes: no-pie static
// ldflags: -Wl,--defsym=answer=0x2a -Wl,--defsym=alias_fn=real_fn
// check: nm-present answer
#include <stdio.h>
extern const char answer[];
int real_fn(int x) { return x * 3; }
int alias_fn(int);
int main(void) {
    printf("%lu %d\n", (unsigned long)answer, alias_fn(14));
    return 0;
}
