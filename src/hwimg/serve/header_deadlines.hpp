#pragma once
// The deadline for a request header (docs/serve.md#limits): a connection must send a complete
// one, and the body if it has one, within `limit` of opening, or of the answer to its previous
// request, else it is shut down.
// libmicrohttpd's own timeout restarts at every byte, so a client sending one byte every few
// seconds would hold its connection for ever.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace hwimg::serve {

class HeaderDeadlines {
public:
  using Clock = std::chrono::steady_clock;
  explicit HeaderDeadlines(std::chrono::milliseconds limit) : m_limit(limit) {}

  // The server's events for a connection (any pointer that names it while it is open) whose socket is `fd`.
  void opened(const void* connection, int fd, Clock::time_point now);
  void header_received(const void* connection);
  void answered(const void* connection, Clock::time_point now);
  // Called before the socket is closed: shut_overdue never touches a descriptor after this.
  void closed(const void* connection);

  // Shuts down (SHUT_RDWR) the socket of every connection whose header is overdue at `now`, so
  // that the server sees the end and closes it; returns how many.
  std::size_t shut_overdue(Clock::time_point now);
  // The same for every connection that owes a header, due or not (the server stops).
  std::size_t shut_waiting();
  [[nodiscard]] std::uint64_t shut_total() const;

private:
  struct Entry {
    int fd = -1;
    bool waiting = true;
    Clock::time_point since;
  };
  std::size_t shut_if(const auto& due);

  const std::chrono::milliseconds m_limit;
  mutable std::mutex m_mutex;
  std::unordered_map<const void*, Entry> m_connections;
  std::uint64_t m_shut = 0;
};

}  // namespace hwimg::serve
