// libstdc++ and libgcc linked statically into a dynamic executable (-static-libstdc++
// -static-libgcc): exceptions, RTTI, iostream and std::string come from the archives, and the
// output needs no libstdc++.so.
// modes: pie no-pie
// cflags: -O1
// ldflags: -static-libstdc++ -static-libgcc
// check: not-needed libstdc++.so.6
// check: not-needed libgcc_s.so.1
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
struct Base { virtual ~Base() = default; virtual std::string name() const { return "base"; } };
struct Derived : Base { std::string name() const override { return "derived"; } };
static int parse(const std::string &s) {
    std::istringstream in(s);
    int v;
    if (!(in >> v)) throw std::invalid_argument("not a number: " + s);
    return v;
}
int main() {
    std::map<std::string, int> counts;
    for (const char *w : {"b", "a", "b", "c", "b"}) counts[w]++;
    for (auto &[k, v] : counts) std::cout << k << "=" << v << " ";
    std::cout << "\n";
    Base *b = new Derived;
    std::cout << b->name() << " " << (dynamic_cast<Derived *>(b) != nullptr) << " " << typeid(*b).name() << "\n";
    delete b;
    try {
        parse("12x3") ;
        std::cout << parse("42") << "\n";
        parse("nope");
    } catch (const std::invalid_argument &e) {
        std::cout << "caught " << e.what() << "\n";
    }
    return 0;
}
