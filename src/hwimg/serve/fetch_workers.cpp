#include "hwimg/serve/fetch_workers.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>

#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>

namespace hwimg::serve {
namespace {

// A worker's last line of defence: an exception escaping a thread would end the process
// (std::terminate), and with it every pull on the node.
template <typename F>
bool run_guarded(F&& f, util::Output& output, std::string_view what) {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    output.warning(fmt::format("{} failed with an unexpected error: {}", what, e.what()));
  } catch (...) {
    output.warning(fmt::format("{} failed with an unexpected error", what));
  }
  return false;
}

// Workers run below the event loop's priority (Linux sets a nice value per thread): with every
// worker busy (200 pulls retrying at once) the loop still gets the CPU it needs to answer /healthz
// and kept tags at once. Raising one's own nice value needs no privilege.
void lower_priority(util::Output& output) {
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
  if (errno == 0 && ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), std::min(nice + 5, 19)) == 0) return;
  output.log(fmt::format("failed to lower a fetch worker's priority: {}", std::strerror(errno)));
}

}  // namespace

FetchWorkers::FetchWorkers(unsigned limit, std::chrono::milliseconds wait, util::Output& output)
    : m_limit(limit == 0 ? 1 : limit), m_wait(wait), m_output(output) {}

FetchWorkers::~FetchWorkers() {
  stop();
}

void FetchWorkers::submit(Job job) {
  {
    std::lock_guard lock(m_mutex);
    if (!m_stopping) {
      m_queue.push_back({std::move(job), Clock::now()});
      // A thread for each job no idle thread will take, up to the limit.
      if (m_queue.size() > m_idle && m_threads.size() < m_limit) {
        m_threads.emplace_back([this] { work(); });
        ++m_idle;
      }
      m_wake.notify_one();
      return;
    }
    ++m_refused;
  }
  std::vector<Job> refused;
  refused.push_back(std::move(job));
  refuse(std::move(refused));
}

void FetchWorkers::refuse_overdue(Clock::time_point now) {
  std::vector<Job> overdue;
  {
    std::lock_guard lock(m_mutex);
    while (!m_queue.empty() && now - m_queue.front().since >= m_wait) {
      overdue.push_back(std::move(m_queue.front().job));
      m_queue.pop_front();
    }
    m_refused += overdue.size();
  }
  refuse(std::move(overdue));
}

void FetchWorkers::stop() {
  std::vector<Job> waiting;
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
    for (auto& queued : m_queue) waiting.push_back(std::move(queued.job));
    m_queue.clear();
    m_refused += waiting.size();
    threads.swap(m_threads);
  }
  m_wake.notify_all();
  refuse(std::move(waiting));
  for (auto& thread : threads) thread.join();
}

FetchWorkers::Load FetchWorkers::load() const {
  std::lock_guard lock(m_mutex);
  return {m_running, m_queue.size(), m_refused};
}

void FetchWorkers::work() {
  lower_priority(m_output);
  std::unique_lock lock(m_mutex);
  while (true) {
    m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
    if (m_queue.empty()) return;
    auto job = std::move(m_queue.front().job);
    m_queue.pop_front();
    --m_idle;
    ++m_running;
    lock.unlock();
    if (!run_guarded(job.run, m_output, "a request")) run_guarded(job.refuse, m_output, "refusing a request");
    job = {};  // what the job holds (an upstream connection) is let go before the next is taken
    lock.lock();
    --m_running;
    ++m_idle;
  }
}

void FetchWorkers::refuse(std::vector<Job> jobs) {
  for (auto& job : jobs) run_guarded(job.refuse, m_output, "refusing a request");
}

}  // namespace hwimg::serve
