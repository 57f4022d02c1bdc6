// --defsym=SYM=NUMBER makes an absolute symbol, --defsym=SYM=OTHER an alias of OTHER's definition,
// --defsym=SYM=OTHER+N (or N+OTHER, OTHER-N, parentheses) the same place moved by N, and sums of
// numbers are absolute. OTHER may be a name the linker defines (`_end`, `_GLOBAL_OFFSET_TABLE_`):
// SYM then has its final value, as in lld (GNU ld evaluates `_end` before layout, so those
// aliases are checked on the output, not compared with GNU ld's).
// (In a PIE, GNU ld and rivet both resolve a PC-relative reference to an absolute symbol relative
// to the load address, so only the fixed-address modes print a stable value.)
// modes: no-pie static
// ldflags: -Wl,--defsym=answer=0x2a -Wl,--defsym=alias_fn=real_fn -Wl,--defsym=second=table+8
// ldflags: -Wl,--defsym=last=(table+0x20)-8 -Wl,--defsym=sum=4K+0x10-16
// ldflags: -Wl,--defsym=end_alias=_end -Wl,--defsym=past_end=_end+16 -Wl,--defsym=got=_GLOBAL_OFFSET_TABLE_
// check: nm-present answer
// check-x86_64: symbol-at-section got .got.plt
// check-aarch64: symbol-at-section got .got
// check: symbol-offset end_alias _end 0
// check: symbol-offset past_end _end 16
#include <stdio.h>
extern const char answer[], sum[];
long table[] = {10, 20, 30, 40, 50};
extern long second[], last[];
int real_fn(int x) { return x * 3; }
int alias_fn(int);
int main(void) {
    printf("%lu %d\n", (unsigned long)answer, alias_fn(14));
    printf("%ld %ld %lu\n", second[0], last[0], (unsigned long)sum);
    return 0;
}
