// __start_SECNAME/__stop_SECNAME over a custom section filled from several objects.
#include <stdio.h>
struct entry { const char *name; int value; };
#define REGISTER(n, v) static const struct entry n __attribute__((used, section("registry"))) = {#n, v}
REGISTER(alpha, 1);
REGISTER(beta, 2);
extern const struct entry __start_registry[], __stop_registry[];
int main(void) {
    int sum = 0, count = 0;
    for (const struct entry *e = __start_registry; e < __stop_registry; e++) {
        sum += e->value;
        count++;
    }
    printf("%d entries, sum %d\n", count, sum);
    return 0;
}
//--- more.c
struct entry { const char *name; int value; };
static const struct entry gamma_ __attribute__((used, section("registry"))) = {"gamma", 30};
