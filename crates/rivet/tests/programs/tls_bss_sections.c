// Several TLS bss sections (.tbss and .tcommon, as an assembler writes them) in one TLS segment:
// each keeps its own place in the TLS template (rivet gave them the same address, so x and y
// shared memory).
#include <stdio.h>
__asm__(".globl x, y\n.section .tbss,\"awT\",@nobits\nx:\n.zero 1024\n"
        ".section .tcommon,\"awT\",@nobits\ny:\n.zero 1024\n.text\n");
extern _Thread_local char x[1024];
extern _Thread_local char y[1024];
_Thread_local int after = 7;
int main(void) {
    x[0] = 3;
    x[1023] = 5;
    printf("%d %d %d %d %d %d %d\n", x[0], x[1], x[1023], y[0], y[1], y[1023], after);
    return 0;
}
