// setjmp/longjmp through several frames.
#include <setjmp.h>
#include <stdio.h>
static jmp_buf env;
static void deep(int n) {
    if (n == 0) longjmp(env, 42);
    deep(n - 1);
}
int main(void) {
    int r = setjmp(env);
    if (r == 0) {
        deep(10);
        puts("not reached");
    }
    printf("longjmp returned %d\n", r);
    return 0;
}
