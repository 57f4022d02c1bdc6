// --exclude-libs=ALL: a shared library built from plug.c and an archive exports plug.c's function
// but not the archive member's (dlsym finds one and not the other), and still calls it.
// modes: pie no-pie
// prepare: gcc -fPIC -c helper.c -o helper.pic.o && ar rcs libhelper.a helper.pic.o
// shared: libplug.so plug.c -- -L. -lhelper -Wl,--exclude-libs,ALL
// link: main.o -ldl
#include <dlfcn.h>
#include <stdio.h>
int main(void) {
    void *h = dlopen("./libplug.so", RTLD_NOW);
    if (!h) {
        printf("dlopen failed: %s\n", dlerror());
        return 1;
    }
    int (*entry)(int) = (int (*)(int))dlsym(h, "plug_entry");
    void *hidden = dlsym(h, "helper_twice");
    printf("plug_entry %s, helper_twice %s\n", entry ? "exported" : "missing", hidden ? "exported" : "hidden");
    printf("%d\n", entry ? entry(20) : -1);
    return 0;
}
//--- plug.c
int helper_twice(int);
int plug_entry(int x) { return helper_twice(x) + 2; }
//--- helper.c
int helper_twice(int x) { return 2 * x; }
