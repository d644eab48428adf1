#pragma once
// Whether `serve` can use its upstreams: each is checked at start (its /v2/ answered over the
// scheme it needs, TLS verified, the auth challenge met with the node's credentials) and again
// every interval, on a thread of its own. What is wrong is said in serve's log when it starts or
// changes, and /readyz answers with it (docs/serve.md#health-and-metrics); /healthz stays liveness.

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "hwimg/serve/upstreams.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::serve {

struct Readiness {
  bool ready = false;
  std::string text;  // "ready\n", or one line per upstream that failed or is not checked yet
};

class UpstreamHealth {
public:
  // Starts checking at once; `upstreams` must outlive this.
  UpstreamHealth(const Upstreams& upstreams, util::Output& output, std::chrono::milliseconds interval);
  UpstreamHealth(const UpstreamHealth&) = delete;
  UpstreamHealth& operator=(const UpstreamHealth&) = delete;

  [[nodiscard]] Readiness readiness() const;

private:
  void run(const std::stop_token& stop);
  // Checks one upstream and records (and reports) the outcome.
  void check(const Upstream& upstream);

  const Upstreams& m_upstreams;
  util::Output& m_output;
  std::chrono::milliseconds m_interval;
  mutable std::mutex m_mutex;
  std::condition_variable_any m_wake;
  // By registry: nullopt while it answers, else why not. Absent: not checked yet.
  std::map<std::string, std::optional<std::string>> m_failures;
  // Last: it uses the members above, and is stopped and joined first (its wait ends on the stop).
  std::jthread m_thread;
};

}  // namespace hwimg::serve
