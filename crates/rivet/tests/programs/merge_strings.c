// SHF_MERGE: identical string literals and constants from different files share one copy (the
// pointers compare equal, as with GNU ld); wide strings and 8/16-byte constants merge by entry;
// .debug_str is merged and the debug info still names the right things.
// cflags: -O1 -g -fmerge-constants
// check: addr2line main main.c:15
#include <stdio.h>
#include <wchar.h>
const char *from_other(void);
const wchar_t *wide_other(void);
double pi_other(void);
const char *same(void) { return "a string both files use"; }
const wchar_t *wide(void) { return L"wide and shared"; }
double pi(void) { return 3.14159265358979; }
__attribute__((noinline)) int same_pointer(const void *a, const void *b) { return a == b; }
int main(void) {
    printf("%s|%s|%d\n", same(), from_other(), same_pointer(same(), from_other()));
    printf("%ls|%d\n", wide(), same_pointer(wide(), wide_other()));
    printf("%.5f %.5f\n", pi(), pi_other());
    puts("only in main");
    return 0;
}
//--- other.c
#include <wchar.h>
const char *from_other(void) { return "a string both files use"; }
const wchar_t *wide_other(void) { return L"wide and shared"; }
double pi_other(void) { return 3.14159265358979 * 2; }
