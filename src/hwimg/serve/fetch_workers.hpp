#pragma once
// The threads that ask upstreams for `serve` (docs/serve.md#limits): at most `limit` jobs run at
// once, each on a thread of its own, started when first needed; a job beyond waits its turn, and
// one that waited longer than `wait` is refused instead of run (the client gets 503 with
// Retry-After rather than a connection held open without end). Workers run at a lower priority
// than the thread that starts them.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "hwimg/util/output.hpp"

namespace hwimg::serve {

class FetchWorkers {
public:
  using Clock = std::chrono::steady_clock;
  struct Job {
    std::function<void()> run;     // may block; an exception it lets out is logged, then `refuse` runs
    std::function<void()> refuse;  // instead of `run`: it waited too long, or the workers stop
  };
  struct Load {
    std::size_t running = 0;
    std::size_t waiting = 0;
    std::uint64_t refused = 0;  // since the start
  };

  FetchWorkers(unsigned limit, std::chrono::milliseconds wait, util::Output& output);
  FetchWorkers(const FetchWorkers&) = delete;
  FetchWorkers& operator=(const FetchWorkers&) = delete;
  ~FetchWorkers();

  // Runs `job` on a free worker, else queues it; refuses it at once once stop() began.
  void submit(Job job);
  // Refuses every job that has waited `wait` or longer at `now`.
  void refuse_overdue(Clock::time_point now);
  // Refuses the jobs waiting, lets those running finish, and joins every thread.
  void stop();
  [[nodiscard]] Load load() const;

private:
  struct Queued {
    Job job;
    Clock::time_point since;
  };
  void work();
  void refuse(std::vector<Job> jobs);

  const unsigned m_limit;
  const std::chrono::milliseconds m_wait;
  util::Output& m_output;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<Queued> m_queue;
  std::vector<std::thread> m_threads;
  std::size_t m_idle = 0;
  std::size_t m_running = 0;
  std::uint64_t m_refused = 0;
  bool m_stopping = false;
};

}  // namespace hwimg::serve
