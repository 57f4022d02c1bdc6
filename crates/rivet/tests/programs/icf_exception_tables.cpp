// Functions whose machine code is the same but whose exception tables (LSDAs) catch different
// types. Linked with --icf=all (the RIVET_TEST_EXTRA_LDFLAGS pass of scripts/test.sh), they must
// stay apart: one folded into another would run with the other's table, and an exception it
// should catch would escape. The pair whose tables are alike may fold.
// cflags: -O2 -ffunction-sections
#include <cstdio>

struct A {};
struct B {};
struct C {};

int which;

__attribute__((noinline)) void thrower() {
  if (which == 1)
    throw A();
  if (which == 2)
    throw B();
  if (which == 3)
    throw C();
}

__attribute__((noinline)) int catch_a() {
  try {
    thrower();
  } catch (A &) {
    return 1;
  }
  return 0;
}

__attribute__((noinline)) int catch_b() {
  try {
    thrower();
  } catch (B &) {
    return 1;
  }
  return 0;
}

__attribute__((noinline)) int catch_any() {
  try {
    thrower();
  } catch (...) {
    return 1;
  }
  return 0;
}

__attribute__((noinline)) int catch_a_again() {
  try {
    thrower();
  } catch (A &) {
    return 1;
  }
  return 0;
}

static void call(const char *name, int (*f)()) {
  try {
    std::printf(" %s=%d", name, f());
  } catch (...) {
    std::printf(" %s escaped", name);
  }
}

int main() {
  for (which = 0; which <= 3; which++) {
    std::printf("%d:", which);
    call("a", catch_a);
    call("b", catch_b);
    call("any", catch_any);
    call("a_again", catch_a_again);
    std::printf("\n");
  }
  return 0;
}
