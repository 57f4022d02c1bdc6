// --dynamic-list exports just the listed symbol, which a dlopen()ed plugin calls back.
// modes: pie no-pie
// shared: plugin.so plugin.c
// ldflags: -Wl,--dynamic-list=exports.list -ldl
#include <dlfcn.h>
#include <stdio.h>
int host_callback(int x) { return x * 5; }
int not_exported(int x) { return x; }
int main(void) {
    void *h = dlopen("./plugin.so", RTLD_NOW);
    if (!h) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    int (*run)(void) = (int (*)(void))dlsym(h, "plugin_run");
    printf("plugin: %d, not_exported visible: %d\n", run(), dlsym(RTLD_DEFAULT, "not_exported") != 0);
    return 0;
}
//--- plugin.c
int host_callback(int);
int plugin_run(void) { return host_callback(8); }
//--- exports.list
{ host_callback; };
