// A static archive built at test time: only the member that defines a used symbol is linked in.
// prepare: ar rcs libfoo.a used.o unused.o
// link: main.o -L. -lfoo
// check: nm-present used_function
// check: nm-absent unused_function
#include <stdio.h>
int used_function(int);
int main(void) {
    printf("%d\n", used_function(20));
    return 0;
}
//--- used.c
int used_function(int x) { return x + 1; }
//--- unused.c
int unused_function(int x) { return x - 1; }
