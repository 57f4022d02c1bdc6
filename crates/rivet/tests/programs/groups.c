// Two archives that depend on each other, resolved inside --start-group/--end-group.
// prepare: ar rcs liba.a a.o && ar rcs libb.a b.o
// link: main.o -L. -Wl,--start-group -la -lb -Wl,--end-group
#include <stdio.h>
int a_entry(int);
int main(void) {
    printf("%d\n", a_entry(5));
    return 0;
}
//--- a.c
int b_helper(int);
int a_tail(int x) { return x * 3; }
int a_entry(int x) { return b_helper(x) + 1; }
//--- b.c
int a_tail(int);
int b_helper(int x) { return a_tail(x) + 10; }
