#include "hwimg/serve/metrics.hpp"

#include <fmt/format.h>

namespace hwimg::serve {
namespace {

// Label values escape backslash, double quote and newline.
std::string label(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

void Metrics::count_request(std::string_view kind, unsigned status) {
  std::lock_guard lock(m_mutex);
  ++m_requests[{std::string(kind), status}];
}

void Metrics::count_upstream_error(std::string_view upstream) {
  std::lock_guard lock(m_mutex);
  ++m_upstream_errors[std::string(upstream)];
}

void Metrics::count_selection(std::string_view variant) {
  std::lock_guard lock(m_mutex);
  ++m_selections[std::string(variant)];
}

void Metrics::observe_resolution(std::chrono::nanoseconds elapsed) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  std::lock_guard lock(m_mutex);
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (seconds <= bounds[i]) ++m_buckets[i];
  }
  ++m_resolutions;
  m_resolution_seconds += seconds;
}

void Metrics::watch_load(std::function<ServerLoad()> load) {
  std::lock_guard lock(m_mutex);
  m_load = std::move(load);
}

std::string Metrics::render() const {
  std::lock_guard lock(m_mutex);
  std::string out;
  out += "# HELP hwimg_serve_requests_total Requests answered, by kind and HTTP status.\n"
         "# TYPE hwimg_serve_requests_total counter\n";
  for (const auto& [key, count] : m_requests) {
    out += fmt::format("hwimg_serve_requests_total{{kind=\"{}\",code=\"{}\"}} {}\n", label(key.first), key.second,
                       count);
  }
  out += "# HELP hwimg_serve_upstream_errors_total Upstream requests that failed or answered wrongly.\n"
         "# TYPE hwimg_serve_upstream_errors_total counter\n";
  for (const auto& [upstream, count] : m_upstream_errors) {
    out += fmt::format("hwimg_serve_upstream_errors_total{{upstream=\"{}\"}} {}\n", label(upstream), count);
  }
  out += "# HELP hwimg_serve_selections_total Tags resolved to a multi-variant index, by the variant chosen.\n"
         "# TYPE hwimg_serve_selections_total counter\n";
  for (const auto& [variant, count] : m_selections) {
    out += fmt::format("hwimg_serve_selections_total{{variant=\"{}\"}} {}\n", label(variant), count);
  }
  out += "# HELP hwimg_serve_resolution_seconds Time to answer a tag, cached or not.\n"
         "# TYPE hwimg_serve_resolution_seconds histogram\n";
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    out += fmt::format("hwimg_serve_resolution_seconds_bucket{{le=\"{}\"}} {}\n", bounds[i], m_buckets[i]);
  }
  out += fmt::format("hwimg_serve_resolution_seconds_bucket{{le=\"+Inf\"}} {}\n", m_resolutions);
  out += fmt::format("hwimg_serve_resolution_seconds_sum {}\n", m_resolution_seconds);
  out += fmt::format("hwimg_serve_resolution_seconds_count {}\n", m_resolutions);
  if (!m_load) return out;
  const auto load = m_load();
  out += fmt::format("# HELP hwimg_serve_connections Client connections open.\n"
                     "# TYPE hwimg_serve_connections gauge\n"
                     "hwimg_serve_connections {}\n"
                     "# HELP hwimg_serve_fetches Requests a fetch worker answers, and those waiting for one.\n"
                     "# TYPE hwimg_serve_fetches gauge\n"
                     "hwimg_serve_fetches{{state=\"running\"}} {}\n"
                     "hwimg_serve_fetches{{state=\"waiting\"}} {}\n"
                     "# HELP hwimg_serve_busy_total Requests answered 503 because no fetch worker was free in time.\n"
                     "# TYPE hwimg_serve_busy_total counter\n"
                     "hwimg_serve_busy_total {}\n"
                     "# HELP hwimg_serve_header_timeouts_total Connections closed for want of a request header in time.\n"
                     "# TYPE hwimg_serve_header_timeouts_total counter\n"
                     "hwimg_serve_header_timeouts_total {}\n",
                     load.connections, load.fetches_running, load.fetches_waiting, load.busy_refusals,
                     load.header_timeouts);
  return out;
}

}  // namespace hwimg::serve
