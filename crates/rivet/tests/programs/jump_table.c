// Function pointers and a switch compiled to a jump table at -O2.
// cflags: -O2
// args: 3 9 17 1 8
#include <stdio.h>
#include <stdlib.h>
static int add(int a, int b) { return a + b; }
static int mul(int a, int b) { return a * b; }
static int (*ops[])(int, int) = {add, mul};
static const char *name(int n) {
    switch (n) {
    case 0: return "zero"; case 1: return "one"; case 2: return "two"; case 3: return "three";
    case 4: return "four"; case 5: return "five"; case 6: return "six"; case 7: return "seven";
    case 8: return "eight"; case 9: return "nine"; default: return "many";
    }
}
int main(int argc, char **argv) {
    int acc = 0;
    for (int i = 1; i < argc; i++) {
        int v = atoi(argv[i]);
        acc = ops[i % 2](acc, v);
        printf("%s ", name(v));
    }
    printf("= %d\n", acc);
    return 0;
}
