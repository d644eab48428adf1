#include "hwimg/util/thread_pool.hpp"

#include <memory>

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

void ThreadPool::run_all(std::vector<std::function<void()>> tasks) {
  auto left = std::make_shared<std::size_t>(tasks.size());
  {
    std::lock_guard lock(m_mutex);
    for (auto& task : tasks) {
      m_queue.emplace_back([this, left, task = std::move(task)] {
        task();
        {
          std::lock_guard done(m_mutex);
          --*left;
        }
        m_finished.notify_all();
      });
    }
  }
  m_wake.notify_all();
  m_finished.notify_all();  // other run_all callers waiting may help too
  std::unique_lock lock(m_mutex);
  while (*left != 0) {
    if (m_queue.empty()) {
      m_finished.wait(lock);
      continue;
    }
    auto task = std::move(m_queue.front());
    m_queue.pop_front();
    lock.unlock();
    task();
    lock.lock();
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
