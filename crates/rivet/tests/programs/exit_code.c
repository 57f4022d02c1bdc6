// The exit status travels through exit().
// expect-exit: 3
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    printf("exiting with 3\n");
    exit(3);
}
