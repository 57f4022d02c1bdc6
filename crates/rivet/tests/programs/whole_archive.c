// --whole-archive links every member, even one nothing refers to (its constructor runs).
// prepare: ar rcs libplugins.a plugin_a.o plugin_b.o
// link: main.o -Wl,--whole-archive -L. -lplugins -Wl,--no-whole-archive
// check: nm-present plugin_b_marker
#include <stdio.h>
int plugin_count;
int main(void) {
    printf("plugins registered: %d\n", plugin_count);
    return 0;
}
//--- plugin_a.c
extern int plugin_count;
__attribute__((constructor)) static void reg_a(void) { plugin_count += 1; }
//--- plugin_b.c
extern int plugin_count;
int plugin_b_marker;
__attribute__((constructor)) static void reg_b(void) { plugin_b_marker = 1; plugin_count += 10; }
