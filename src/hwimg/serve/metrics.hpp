#pragma once
// What `hwimg serve` counts, in Prometheus' text exposition format: requests by kind and status,
// upstream errors, selections by variant, resolution latency, and the server's load.

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "hwimg/serve/http_server.hpp"

namespace hwimg::serve {

class Metrics {
public:
  void count_request(std::string_view kind, unsigned status);
  void count_upstream_error(std::string_view upstream);
  void count_selection(std::string_view variant);  // the variant chosen, or "(none)" when nothing fits
  void observe_resolution(std::chrono::nanoseconds elapsed);
  // Where the server's load is read at each render; nullptr: not shown.
  void watch_load(std::function<ServerLoad()> load);

  // The exposition, served with content type `content_type`.
  [[nodiscard]] std::string render() const;
  static constexpr std::string_view content_type = "text/plain; version=0.0.4; charset=utf-8";

private:
  // Upper bounds in seconds; a cached tag takes well under a millisecond, an upstream round trip more.
  static constexpr std::array<double, 12> bounds{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                 0.05,   0.1,   0.25,   0.5,   1,     5};
  mutable std::mutex m_mutex;
  std::map<std::pair<std::string, unsigned>, std::uint64_t> m_requests;
  std::map<std::string, std::uint64_t> m_upstream_errors;
  std::map<std::string, std::uint64_t> m_selections;
  std::array<std::uint64_t, bounds.size()> m_buckets{};
  std::uint64_t m_resolutions = 0;
  double m_resolution_seconds = 0;
  std::function<ServerLoad()> m_load;
};

}  // namespace hwimg::serve
