#pragma once
// A stop for the HTTP exchanges of many registry clients at once, set from another thread: when
// `hwimg serve` stops, a fetch stalled on an upstream ends at once instead of after the registry
// client's own stall timeout (60 s), and after the grace every fetch ends
// (docs/serve.md#signals-exit-and-requirements).

#include <atomic>
#include <chrono>
#include <optional>

namespace hwimg::registry {

class Cancellation {
public:
  // From now on an exchange whose caller waits for it ends (TransportFailure::cancelled) once
  // nothing moved for `after`; zero: every exchange, at once.
  void cut_stalled(std::chrono::milliseconds after) { m_after_ms.store(after.count()); }

  // nullopt while nothing is cut.
  [[nodiscard]] std::optional<std::chrono::milliseconds> stall_limit() const {
    const auto after = m_after_ms.load();
    if (after < 0) return std::nullopt;
    return std::chrono::milliseconds(after);
  }

private:
  std::atomic<std::chrono::milliseconds::rep> m_after_ms{-1};
};

}  // namespace hwimg::registry
