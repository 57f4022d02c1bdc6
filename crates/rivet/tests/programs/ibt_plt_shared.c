// An IBT-enabled PLT between an executable and a shared library, both linked with -z ibtplt from
// -fcf-protection=full objects: the library calls its own exported (preemptible) functions through
// `.plt.sec`, the executable takes an imported function's address (a canonical `.plt.sec` entry in
// non-PIE) and passes it to the library, which compares it with its own view of the address.
// modes: pie no-pie
// cflags: -fcf-protection=full
// shared: libibt.so ibtlib.c -- -Wl,-z,ibtplt
// ldflags: -Wl,-z,ibtplt -libt
// targets: x86_64 (x86-64's IBT)
#include <stdio.h>
int hello(int);
int world(int);
int same_as_hello(int (*)(int));
int main(void) {
    int (*h)(int) = hello;
    printf("%d %d %d same=%d\n", hello(1), world(2), h(3), same_as_hello(h));
    return 0;
}
//--- ibtlib.c
int hello(int x) { return x + 100; }
int world(int x) { return hello(x) * 2; }
int same_as_hello(int (*f)(int)) { return f == hello; }
