// Copy relocations of a library's variables into a fixed-address executable: the copy of a const
// variable lands in RELRO (.bss.rel.ro), read-only once relocated, so writing it faults as writing
// the library's original would; a writable variable's copy stays writable. (rivet put both in
// .bss, and the write to the const copy went through.)
// modes: no-pie
// shared: libvars.so vars.c
// ldflags: -lvars
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
extern const char readonly[100];
extern char readwrite[100];
static volatile int segv;
static sigjmp_buf env;
static void handler(int sig) {
    (void)sig;
    segv = 1;
    siglongjmp(env, 1);
}
int main(void) {
    signal(SIGSEGV, handler);
    readwrite[0] = 'x';
    int x = segv;
    if (sigsetjmp(env, 1) == 0)
        *(volatile char *)readonly = 5;
    printf("sigsegv %d %d %s %s\n", x, segv, readonly, readwrite);
    return 0;
}
//--- vars.c
const char readonly[100] = "abc";
char readwrite[100] = "def";
