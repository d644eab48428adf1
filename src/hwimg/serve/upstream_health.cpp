#include "hwimg/serve/upstream_health.hpp"

#include <exception>

#include <fmt/format.h>

namespace hwimg::serve {

UpstreamHealth::UpstreamHealth(const Upstreams& upstreams, util::Output& output, std::chrono::milliseconds interval)
    : m_upstreams(upstreams), m_output(output), m_interval(interval),
      m_thread([this](const std::stop_token& stop) { run(stop); }) {}

Readiness UpstreamHealth::readiness() const {
  std::vector<std::string> problems;
  std::lock_guard lock(m_mutex);
  for (const auto& upstream : m_upstreams.list()) {
    const auto found = m_failures.find(upstream.registry);
    if (found == m_failures.end()) {
      problems.push_back(fmt::format("upstream {}: not checked yet", upstream.registry));
    } else if (found->second) {
      problems.push_back(fmt::format("upstream {}: {}", upstream.registry, *found->second));
    }
  }
  if (problems.empty()) return {true, "ready\n"};
  std::string text;
  for (const auto& problem : problems) text += problem + "\n";
  return {false, std::move(text)};
}

void UpstreamHealth::run(const std::stop_token& stop) {
  while (!stop.stop_requested()) {
    for (const auto& upstream : m_upstreams.list()) {
      if (stop.stop_requested()) return;
      check(upstream);
    }
    std::unique_lock lock(m_mutex);
    m_wake.wait_for(lock, stop, m_interval, [] { return false; });
  }
}

void UpstreamHealth::check(const Upstream& upstream) {
  std::optional<std::string> failure;
  try {
    // A client of its own, tried once: a check must not wait out the retries meant for pulls, and
    // a failure must not linger in the state of the clients that serve them.
    auto options = m_upstreams.client_options(upstream);
    options.max_attempts = 1;
    options.output = &util::null_output();
    auto client = registry::Client::create(std::move(options));
    auto reached = client ? client->check_registry(upstream.registry) : Result<void>(std::unexpected(client.error()));
    if (!reached) failure = reached.error().message;
  } catch (const std::exception& e) {
    failure = fmt::format("failed to check {}: {}", upstream.registry, e.what());
  }
  std::optional<std::optional<std::string>> before;
  {
    std::lock_guard lock(m_mutex);
    if (const auto found = m_failures.find(upstream.registry); found != m_failures.end()) before = found->second;
    m_failures[upstream.registry] = failure;
  }
  if (before && *before == failure) return;
  if (failure) {
    m_output.warning(fmt::format("upstream {} cannot be used: {}; pulls through it fail until that is fixed (/readyz "
                                 "says so meanwhile)",
                                 upstream.registry, *failure));
  } else {
    m_output.progress(fmt::format("upstream {}: {}", upstream.registry, before ? "answers again" : "answers"));
  }
}

}  // namespace hwimg::serve
