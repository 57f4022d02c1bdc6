// Weak definitions overridden by strong ones, weak undefined references that stay NULL.
#include <stdio.h>
__attribute__((weak)) int value(void) { return 1; }
__attribute__((weak)) int only_weak(void) { return 3; }
extern int missing(void) __attribute__((weak));
extern int missing_data __attribute__((weak));
int main(void) {
    printf("value=%d only_weak=%d missing=%s data=%s\n", value(), only_weak(), missing ? "set" : "null",
           &missing_data ? "set" : "null");
    return 0;
}
//--- strong.c
int value(void) { return 2; }
