#pragma once
// A fixed set of worker threads running submitted tasks in FIFO order.

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace hwimg::util {

class ThreadPool {
public:
  explicit ThreadPool(unsigned threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  template <typename F>
  [[nodiscard]] auto submit(F task) -> std::future<decltype(task())> {
    auto packaged = std::make_shared<std::packaged_task<decltype(task())()>>(std::move(task));
    auto future = packaged->get_future();
    {
      std::lock_guard lock(m_mutex);
      m_queue.emplace_back([packaged] { (*packaged)(); });
    }
    m_wake.notify_one();
    return future;
  }

  // Runs every task and returns when all have finished. The calling thread runs queued tasks too
  // while it waits, so a task may call run_all on its own pool without starving it. Each task
  // must not throw.
  void run_all(std::vector<std::function<void()>> tasks);

  [[nodiscard]] unsigned size() const { return static_cast<unsigned>(m_workers.size()); }

private:
  void work();

  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::condition_variable m_finished;  // a run_all task ended
  std::deque<std::function<void()>> m_queue;
  bool m_stopping = false;
  std::vector<std::thread> m_workers;
};

// Worker count for CPU-bound work: the cores this process may use, at least one.
[[nodiscard]] unsigned default_parallelism();

}  // namespace hwimg::util
