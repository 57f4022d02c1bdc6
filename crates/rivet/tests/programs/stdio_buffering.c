// Buffered stdio into a pipe, flushed at exit; output larger than the buffer.
#include <stdio.h>
int main(void) {
    for (int i = 0; i < 5000; i++) printf("line %d %s\n", i, i % 7 ? "" : "seven");
    fprintf(stderr, "done\n");
    return 0;
}
