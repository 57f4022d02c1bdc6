// C++ threads: std::thread, std::mutex, std::atomic, thread_local objects with constructors and
// destructors, and an exception thrown in one thread and rethrown in another through
// std::promise/std::future (exception_ptr across threads).
// cflags: -O1
#include <atomic>
#include <future>
#include <iostream>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

static std::mutex lock;
static std::atomic<int> destroyed{0};

struct PerThread {
    std::string tag = "worker";
    ~PerThread() { destroyed.fetch_add(1); }
};
thread_local PerThread per_thread;

static long work(int id, std::vector<long> &out) {
    long sum = 0;
    for (int i = 0; i <= id * 1000; i++) sum += i;
    std::lock_guard<std::mutex> g(lock);
    out.push_back(sum);
    return sum + static_cast<long>(per_thread.tag.size());
}

int main() {
    std::vector<long> sums;
    std::vector<std::thread> threads;
    for (int id = 1; id <= 4; id++) threads.emplace_back([id, &sums] { work(id, sums); });
    for (auto &t : threads) t.join();
    std::cout << "total " << std::accumulate(sums.begin(), sums.end(), 0L) << "\n";
    std::cout << "thread_local destructors " << destroyed.load() << "\n";

    std::promise<int> p;
    std::future<int> f = p.get_future();
    std::thread thrower([&p] {
        try {
            throw std::runtime_error("thrown in a thread");
        } catch (...) {
            p.set_exception(std::current_exception());
        }
    });
    thrower.join();
    try {
        f.get();
    } catch (const std::runtime_error &e) {
        std::cout << "caught: " << e.what() << "\n";
    }
    auto answer = std::async(std::launch::async, [] { return 6 * 7; });
    std::cout << "async " << answer.get() << "\n";
    return 0;
}
