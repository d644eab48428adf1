// The thread pool (util/thread_pool.hpp): submitted tasks run and their results come back;
// run_all returns once every task ran, also when the tasks themselves call run_all on the same
// pool and there are fewer workers than waiting callers (the waiters run queued tasks).
#include <doctest/doctest.h>

#include <atomic>

#include "hwimg/util/thread_pool.hpp"

using namespace hwimg;

TEST_CASE("thread pool: submit returns each task's result") {
  util::ThreadPool pool(2);
  auto six = pool.submit([] { return 6; });
  auto seven = pool.submit([] { return 7; });
  CHECK(six.get() * seven.get() == 42);
}

TEST_CASE("thread pool: run_all runs every task before it returns") {
  util::ThreadPool pool(2);
  std::atomic<int> ran{0};
  std::vector<std::function<void()>> tasks;
  for (int i = 0; i < 100; ++i) tasks.emplace_back([&] { ++ran; });
  pool.run_all(std::move(tasks));
  CHECK(ran == 100);
}

TEST_CASE("thread pool: run_all inside tasks on a one-worker pool finishes") {
  util::ThreadPool pool(1);
  std::atomic<int> inner{0};
  std::vector<std::future<void>> outer;
  for (int i = 0; i < 4; ++i) {
    outer.push_back(pool.submit([&] {
      std::vector<std::function<void()>> tasks;
      for (int j = 0; j < 8; ++j) tasks.emplace_back([&] { ++inner; });
      pool.run_all(std::move(tasks));
    }));
  }
  std::vector<std::function<void()>> mine;
  for (int j = 0; j < 8; ++j) {
    mine.emplace_back([&] {
      std::vector<std::function<void()>> nested{[&] { ++inner; }};
      pool.run_all(std::move(nested));
    });
  }
  pool.run_all(std::move(mine));
  for (auto& future : outer) future.get();
  CHECK(inner == 4 * 8 + 8);
}
