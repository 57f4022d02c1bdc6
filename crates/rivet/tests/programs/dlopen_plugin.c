// A dlopen()ed plugin that calls back into the executable (exported with -rdynamic) and uses its
// own TLS through the general-dynamic model.
// modes: pie no-pie
// shared: plugin.so plugin.c
// ldflags: -rdynamic -ldl
#include <dlfcn.h>
#include <stdio.h>
int host_value(void) { return 41; }
int main(void) {
    void *h = dlopen("./plugin.so", RTLD_NOW);
    if (!h) {
        printf("dlopen failed: %s\n", dlerror());
        return 1;
    }
    int (*run)(int) = (int (*)(int))dlsym(h, "plugin_run");
    printf("plugin_run: %d %d\n", run(1), run(2));
    dlclose(h);
    return 0;
}
//--- plugin.c
int host_value(void);
static __thread int calls;
int plugin_run(int x) { return host_value() + x + ++calls * 100; }
