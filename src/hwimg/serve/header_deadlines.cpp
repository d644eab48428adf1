#include "hwimg/serve/header_deadlines.hpp"

#include <sys/socket.h>

namespace hwimg::serve {

void HeaderDeadlines::opened(const void* connection, int fd, Clock::time_point now) {
  std::lock_guard lock(m_mutex);
  m_connections[connection] = {fd, true, now};
}

void HeaderDeadlines::header_received(const void* connection) {
  std::lock_guard lock(m_mutex);
  if (const auto found = m_connections.find(connection); found != m_connections.end()) found->second.waiting = false;
}

void HeaderDeadlines::answered(const void* connection, Clock::time_point now) {
  std::lock_guard lock(m_mutex);
  if (const auto found = m_connections.find(connection); found != m_connections.end()) {
    found->second.waiting = true;
    found->second.since = now;
  }
}

void HeaderDeadlines::closed(const void* connection) {
  std::lock_guard lock(m_mutex);
  m_connections.erase(connection);
}

std::size_t HeaderDeadlines::shut_overdue(Clock::time_point now) {
  return shut_if([&](const Entry& entry) { return now - entry.since >= m_limit; });
}

std::size_t HeaderDeadlines::shut_waiting() {
  return shut_if([](const Entry&) { return true; });
}

std::uint64_t HeaderDeadlines::shut_total() const {
  std::lock_guard lock(m_mutex);
  return m_shut;
}

std::size_t HeaderDeadlines::shut_if(const auto& due) {
  // Under the lock: closed() comes before the server closes the descriptor, so the number
  // shut down here is still this connection's, never one reused by a newer connection.
  std::lock_guard lock(m_mutex);
  std::size_t shut = 0;
  for (auto& [connection, entry] : m_connections) {
    if (!entry.waiting || entry.fd < 0 || !due(entry)) continue;
    // Its error is of no use: a socket the peer already closed is being closed anyway.
    (void)::shutdown(entry.fd, SHUT_RDWR);
    entry.fd = -1;  // once is enough; the server's close follows
    ++shut;
  }
  m_shut += shut;
  return shut;
}

}  // namespace hwimg::serve
