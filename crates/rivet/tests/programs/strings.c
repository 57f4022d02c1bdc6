// The same string literals in two objects (mergeable string sections); contents are compared.
#include <stdio.h>
#include <string.h>
const char *from_other(void);
int main(void) {
    const char *a = "a literal shared between objects";
    const char *b = from_other();
    printf("%s|%s|%d\n", a, b, strcmp(a, b));
    return 0;
}
//--- other.c
const char *from_other(void) { return "a literal shared between objects"; }
