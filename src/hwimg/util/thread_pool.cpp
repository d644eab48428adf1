#include "hwimg/util/thread_pool.hpp"

#include <sched.h>

namespace hwimg::util {

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned i = 0; i < std::max(1u, threads); ++i) {
    m_workers.emplace_back([this] { work(); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  for (auto& worker : m_workers) {
    worker.join();
  }
}

void ThreadPool::work() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(m_mutex);
      m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
      if (m_queue.empty()) {
        return;
      }
      task = std::move(m_queue.front());
      m_queue.pop_front();
    }
    task();
  }
}

unsigned default_parallelism() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace hwimg::util
