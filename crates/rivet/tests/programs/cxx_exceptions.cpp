// C++: exceptions thrown across objects, RTTI and dynamic_cast, iostream, templates, std::thread.
// cflags: -O2 -pthread
// ldflags: -pthread
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include "shape.h"
int check(int x);
int main() {
    std::vector<int> ok;
    for (int i = 0; i < 6; i++) {
        try {
            ok.push_back(check(i));
        } catch (const std::out_of_range &e) {
            std::cout << "out_of_range: " << e.what() << "\n";
        } catch (const std::exception &e) {
            std::cout << "exception: " << e.what() << "\n";
        }
    }
    std::vector<std::unique_ptr<Shape>> shapes;
    shapes.push_back(make_square(3));
    shapes.push_back(make_circle(2));
    for (auto &s : shapes)
        std::cout << s->name() << " " << s->area() << " square? " << (dynamic_cast<Square *>(s.get()) != nullptr) << "\n";
    int total = 0;
    std::thread t([&] { total = sum_of(ok); });
    t.join();
    std::cout << "kept " << ok.size() << " sum " << total << std::endl;
    return 0;
}
//--- shape.h
#include <memory>
#include <string>
#include <vector>
struct Shape { virtual ~Shape() {} virtual std::string name() const = 0; virtual int area() const = 0; };
struct Square : Shape { int s; explicit Square(int s) : s(s) {} std::string name() const override { return "square"; } int area() const override { return s * s; } };
std::unique_ptr<Shape> make_square(int);
std::unique_ptr<Shape> make_circle(int);
template <typename T> T sum_of(const std::vector<T> &v) { T t{}; for (auto &x : v) t += x; return t; }
//--- other.cpp
#include <stdexcept>
#include <string>
#include "shape.h"
struct Circle : Shape { int r; explicit Circle(int r) : r(r) {} std::string name() const override { return "circle"; } int area() const override { return 3 * r * r; } };
std::unique_ptr<Shape> make_square(int s) { return std::make_unique<Square>(s); }
std::unique_ptr<Shape> make_circle(int r) { return std::make_unique<Circle>(r); }
int check(int x) {
    if (x == 2) throw std::out_of_range("two is out of range");
    if (x == 4) throw std::runtime_error("four is " + std::to_string(x));
    return sum_of(std::vector<int>{x, x});
}
