// One computation per key: concurrent callers share it, a failure settles every waiter and is
// computed again later (unless kept), keys are independent.

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "hwimg/util/single_flight.hpp"

using namespace hwimg;
using namespace std::chrono_literals;

namespace {

// Holds every computation until released, so the callers started meanwhile all find it running.
struct Gate {
  std::atomic<bool> open{false};
  void wait() const {
    while (!open) std::this_thread::sleep_for(1ms);
  }
};

template <typename Call>
std::vector<std::thread> start(int count, Call call) {
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) threads.emplace_back(call);
  return threads;
}

void join(std::vector<std::thread>& threads) {
  for (auto& thread : threads) thread.join();
}

}  // namespace

TEST_CASE("concurrent callers for a key share one computation") {
  util::SingleFlight<std::string, int> flight;
  Gate gate;
  std::atomic<int> computed{0};
  std::atomic<int> shared{0};
  auto threads = start(16, [&] {
    const auto value = flight.get("k", [&]() -> Result<int> {
      ++computed;
      gate.wait();
      return 42;
    });
    if (value && *value == 42) ++shared;
  });
  std::this_thread::sleep_for(50ms);
  gate.open = true;
  join(threads);
  CHECK(computed == 1);
  CHECK(shared == 16);
  CHECK(*flight.get("k", []() -> Result<int> { return 7; }) == 42);
  CHECK(flight.values() == std::vector<int>{42});
}

TEST_CASE("a failing computation settles its waiters with the error, and a later call computes again") {
  util::SingleFlight<std::string, int> flight;
  Gate gate;
  std::atomic<int> computed{0};
  std::atomic<int> failed{0};
  auto threads = start(8, [&] {
    const auto value = flight.get("k", [&]() -> Result<int> {
      ++computed;
      gate.wait();
      return fail("failed to read k: gone");
    });
    if (!value && value.error().message == "failed to read k: gone") ++failed;
  });
  std::this_thread::sleep_for(50ms);
  gate.open = true;
  join(threads);
  CHECK(computed == 1);
  CHECK(failed == 8);
  CHECK(*flight.get("k", [&]() -> Result<int> { return 3; }) == 3);
  CHECK(flight.values() == std::vector<int>{3});
}

TEST_CASE("a throwing computation rethrows to every waiter and is not kept") {
  util::SingleFlight<std::string, int> flight;
  Gate gate;
  std::atomic<int> computed{0};
  std::atomic<int> thrown{0};
  auto threads = start(4, [&] {
    try {
      (void)flight.get("k", [&]() -> Result<int> {
        ++computed;
        gate.wait();
        throw std::runtime_error("boom");
      });
    } catch (const std::runtime_error&) {
      ++thrown;
    }
  });
  std::this_thread::sleep_for(50ms);
  gate.open = true;
  join(threads);
  CHECK(computed == 1);
  CHECK(thrown == 4);
  CHECK(*flight.get("k", []() -> Result<int> { return 5; }) == 5);
}

TEST_CASE("different keys compute independently and at the same time") {
  util::SingleFlight<int, int> flight;
  std::atomic<int> running{0};
  std::atomic<int> computed{0};
  std::atomic<int> met{0};
  std::vector<std::thread> threads;
  for (int key = 0; key < 4; ++key) {
    threads.emplace_back([&, key] {
      (void)flight.get(key, [&]() -> Result<int> {
        ++computed;
        ++running;
        // Each waits (for a while) until all four run: one computation at a time never gets there.
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (running < 4 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
        if (running == 4) ++met;
        return key * 10;
      });
    });
  }
  join(threads);
  CHECK(computed == 4);
  CHECK(met == 4);
  CHECK(flight.values() == std::vector<int>{0, 10, 20, 30});
}

TEST_CASE("what is kept follows Keep") {
  int computed = 0;
  const auto failing = [&]() -> Result<int> {
    ++computed;
    return fail("failed to compute: no");
  };
  const auto succeeding = [&]() -> Result<int> { return ++computed; };

  util::SingleFlight<std::string, int> everything(util::Keep::everything);
  CHECK_FALSE(everything.get("k", failing));
  CHECK_FALSE(everything.get("k", succeeding));
  CHECK(computed == 1);

  computed = 0;
  util::SingleFlight<std::string, int> nothing(util::Keep::nothing);
  CHECK(*nothing.get("k", succeeding) == 1);
  CHECK(*nothing.get("k", succeeding) == 2);
  CHECK(nothing.values().empty());
}

TEST_CASE("clear forgets kept values and computations under way") {
  util::SingleFlight<std::string, int> flight;
  CHECK(*flight.get("k", []() -> Result<int> { return 1; }) == 1);
  flight.clear();
  CHECK(*flight.get("k", []() -> Result<int> { return 2; }) == 2);
  // A computation that outlives a clear() answers its own caller; the next caller computes anew.
  CHECK(*flight.get("c", [&]() -> Result<int> {
    flight.clear();
    return 3;
  }) == 3);
  CHECK(*flight.get("c", []() -> Result<int> { return 4; }) == 4);
}
