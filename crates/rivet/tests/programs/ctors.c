// Constructors and destructors with priorities across two objects, atexit, .init_array order.
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor(200))) static void c200(void) { puts("ctor 200 (main.c)"); }
__attribute__((constructor(101))) static void c101(void) { puts("ctor 101 (main.c)"); }
__attribute__((constructor)) static void cdefault(void) { puts("ctor default (main.c)"); }
__attribute__((destructor(101))) static void d101(void) { puts("dtor 101 (main.c)"); }
__attribute__((destructor)) static void ddefault(void) { puts("dtor default (main.c)"); }
static void at_exit_handler(void) { puts("atexit handler"); }
int main(void) {
    atexit(at_exit_handler);
    puts("main");
    return 0;
}
//--- second.c
#include <stdio.h>
__attribute__((constructor(150))) static void c150(void) { puts("ctor 150 (second.c)"); }
__attribute__((constructor)) static void cdefault2(void) { puts("ctor default (second.c)"); }
__attribute__((destructor(150))) static void d150(void) { puts("dtor 150 (second.c)"); }
