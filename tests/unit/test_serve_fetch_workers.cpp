// serve::FetchWorkers: no more jobs at once than the limit, threads started only when needed,
// waits beyond the limit refused when overdue or at the stop, and a job that throws refused
// instead of ending the process.

#include <atomic>
#include <chrono>
#include <latch>
#include <stdexcept>
#include <thread>

#include <doctest/doctest.h>

#include "hwimg/serve/fetch_workers.hpp"

using namespace hwimg;
using namespace std::chrono_literals;

namespace {

void wait_until(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!condition() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  REQUIRE(condition());
}

}  // namespace

TEST_CASE("at most the limit runs; the rest wait in order, and overdue waits are refused") {
  serve::FetchWorkers workers(2, 1s, util::null_output());
  std::latch release(1);
  std::atomic<int> ran = 0;
  std::atomic<int> refused = 0;
  for (int i = 0; i < 5; ++i) {
    workers.submit({[&] {
                      ++ran;
                      release.wait();
                    },
                    [&] { ++refused; }});
  }
  wait_until([&] { return ran == 2; });
  std::this_thread::sleep_for(50ms);
  CHECK(ran == 2);
  CHECK(workers.load().running == 2);
  CHECK(workers.load().waiting == 3);

  workers.refuse_overdue(std::chrono::steady_clock::now());  // not yet a second
  CHECK(refused == 0);
  workers.refuse_overdue(std::chrono::steady_clock::now() + 1s);
  CHECK(refused == 3);
  CHECK(workers.load().waiting == 0);
  CHECK(workers.load().refused == 3);
  release.count_down();
  wait_until([&] { return workers.load().running == 0; });
  CHECK(ran == 2);
}

TEST_CASE("a job that throws is refused, and the worker goes on") {
  serve::FetchWorkers workers(1, 1s, util::null_output());
  std::atomic<int> refused = 0;
  std::atomic<int> ran = 0;
  workers.submit({[] { throw std::runtime_error("boom"); }, [&] { ++refused; }});
  workers.submit({[&] { ++ran; }, [&] { ++refused; }});
  wait_until([&] { return ran == 1; });
  CHECK(refused == 1);
}

TEST_CASE("stop refuses the waiting, lets the running finish, and refuses what comes after") {
  serve::FetchWorkers workers(1, 10s, util::null_output());
  std::atomic<bool> started = false;
  std::atomic<bool> finished = false;
  std::atomic<int> refused = 0;
  workers.submit({[&] {
                    started = true;
                    std::this_thread::sleep_for(100ms);
                    finished = true;
                  },
                  [&] { ++refused; }});
  workers.submit({[] {}, [&] { ++refused; }});
  wait_until([&] { return started.load(); });
  workers.stop();
  CHECK(finished);
  CHECK(refused == 1);
  workers.submit({[] {}, [&] { ++refused; }});
  CHECK(refused == 2);
}
