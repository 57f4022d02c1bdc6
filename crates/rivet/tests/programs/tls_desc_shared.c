// TLS descriptors (-mtls-dialect=gnu2) in shared objects, kept as descriptors: libtdesc.so (linked
// directly) reaches its exported variable (R_X86_64_TLSDESC against the symbol), its static and
// hidden ones (symbol 0, the offset in its TLS block as addend), a variable imported from
// libtdbase.so, and two local-dynamic ones through _TLS_MODULE_BASE_ (-O2 makes gcc share one
// descriptor call for them). The dlopen()ed tdplugin.so uses the executable's variable and a big
// block of its own (too big for the static TLS surplus: glibc's dynamic descriptor). Each is also
// used from a second thread. rivet refused descriptors outside executables.
// modes: pie no-pie
// cflags: -O2 -mtls-dialect=gnu2
// shared: libtdbase.so base.c
// shared: libtdesc.so lib.c
// shared: tdplugin.so plugin.c
// ldflags: -ltdesc -ltdbase -rdynamic -ldl -pthread
// targets: x86_64 (x86-64's TLS descriptor dialect (gnu2); tests/aarch64.rs covers AArch64's descriptors)
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
__thread int host_tls = 7;
extern __thread int lib_tls;
extern __thread int base_tls; // used here too, so that --as-needed keeps libtdbase.so
int lib_bump(int);
int lib_sum(void);
static int (*plugin_run)(int);

static void *worker(void *arg) {
    int n = (int)(long)arg;
    host_tls = n;
    printf("thread: bump=%d sum=%d lib_tls=%d plugin=%d %d\n", lib_bump(n), lib_sum(), lib_tls, plugin_run(n),
           plugin_run(1));
    return 0;
}

int main(void) {
    printf("bump=%d %d sum=%d lib_tls=%d base_tls=%d\n", lib_bump(1), lib_bump(2), lib_sum(), lib_tls, base_tls);
    void *h = dlopen("./tdplugin.so", RTLD_NOW);
    if (!h) {
        printf("dlopen failed: %s\n", dlerror());
        return 1;
    }
    plugin_run = (int (*)(int))dlsym(h, "plugin_run");
    printf("plugin=%d %d\n", plugin_run(3), plugin_run(4));
    pthread_t t;
    pthread_create(&t, 0, worker, (void *)40L);
    pthread_join(t, 0);
    printf("main again: bump=%d sum=%d plugin=%d\n", lib_bump(0), lib_sum(), plugin_run(0));
    return 0;
}
//--- base.c
__thread int base_tls = 300;
//--- lib.c
__thread int lib_tls = 5;
static __thread int lib_calls;
static __thread char lib_buf[64] __attribute__((tls_model("local-dynamic"))) = "lib";
static __thread int lib_ld __attribute__((tls_model("local-dynamic"))) = 9;
__attribute__((visibility("hidden"))) __thread long lib_hidden = 1000;
__attribute__((visibility("hidden"))) __thread long lib_hidden2 = 20000;
extern __thread int base_tls;
int lib_bump(int x) {
    lib_calls++;
    lib_hidden += x;
    lib_tls += x;
    lib_buf[1] += x;
    return lib_tls + lib_calls + base_tls;
}
int lib_sum(void) {
    return lib_calls * 1000 + (int)lib_hidden + (int)lib_hidden2++ + lib_buf[1] + lib_ld++ + base_tls++;
}
//--- plugin.c
extern __thread int host_tls;
static __thread int calls;
static __thread int big[20000] = {1};
int plugin_run(int x) {
    calls++;
    big[19999] += x;
    return host_tls * 1000 + calls * 100 + big[19999] + big[0];
}
