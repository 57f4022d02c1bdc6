// The smallest real program: stdio through libc.
#include <stdio.h>
int main(void) {
    printf("hello, world\n");
    return 0;
}
