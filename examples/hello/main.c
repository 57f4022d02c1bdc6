/* A small two-file program for the README's first command. */
#include <stdio.h>
const char *greeting(int n);
int main(void) {
    for (int i = 0; i < 3; i++) puts(greeting(i));
    return 0;
}
