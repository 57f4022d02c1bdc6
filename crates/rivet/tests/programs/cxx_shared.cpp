// C++ across a shared library: exceptions thrown in the library and caught in the executable,
// virtual calls and RTTI across the boundary, std::string in the interface.
// modes: pie no-pie
// shared: libwidget.so widget.cpp
// ldflags: -lwidget
#include <iostream>
#include <stdexcept>
#include "widget.h"
int main() {
    Widget *w = make_widget("gear");
    std::cout << w->describe() << " " << (dynamic_cast<Gear *>(w) != nullptr) << "\n";
    try {
        w->spin(-1);
    } catch (const std::invalid_argument &e) {
        std::cout << "caught from library: " << e.what() << "\n";
    }
    delete w;
    return 0;
}
//--- widget.h
#include <string>
struct Widget { virtual ~Widget() {} virtual std::string describe() const = 0; virtual void spin(int) = 0; };
struct Gear : Widget { std::string name; explicit Gear(std::string n) : name(n) {} std::string describe() const override; void spin(int) override; };
Widget *make_widget(const std::string &);
//--- widget.cpp
#include <stdexcept>
#include "widget.h"
std::string Gear::describe() const { return "gear:" + name; }
void Gear::spin(int speed) { if (speed < 0) throw std::invalid_argument("negative speed " + std::to_string(speed)); }
Widget *make_widget(const std::string &n) { return new Gear(n); }
