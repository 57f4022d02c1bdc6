// Common symbols (-fcommon): the same tentative definition in two files, the larger size wins.
// cflags: -fcommon
#include <stdio.h>
int shared_counter;
char buffer[16];
void bump(void);
int main(void) {
    shared_counter = 40;
    bump();
    buffer[15] = 'x';
    printf("%d %zu %c\n", shared_counter, sizeof buffer, buffer[15]);
    return 0;
}
//--- other.c
int shared_counter;
char buffer[64];
void bump(void) { shared_counter += 2; buffer[63] = 'y'; }
