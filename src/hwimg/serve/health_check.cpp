#include "hwimg/serve/health_check.hpp"

#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "hwimg/util/fd.hpp"

namespace hwimg::serve {
namespace {

using Clock = std::chrono::steady_clock;

// Waits for `events` on `fd` until `deadline`; false when the time ran out or poll failed.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd wait{fd, events, 0};
    const int ready = ::poll(&wait, 1, static_cast<int>(left));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

}  // namespace

Result<void> check_health(const std::string& address, std::uint16_t port, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (auto* v4 = reinterpret_cast<sockaddr_in*>(&storage); ::inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    if (v4->sin_addr.s_addr == htonl(INADDR_ANY)) v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    length = sizeof(sockaddr_in);
  } else if (auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
             ::inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    if (std::memcmp(&v6->sin6_addr, &in6addr_any, sizeof in6addr_any) == 0) v6->sin6_addr = in6addr_loopback;
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    length = sizeof(sockaddr_in6);
  } else {
    return fail("failed to check /healthz: {} is not an IPv4 or IPv6 address", address);
  }
  util::UniqueFd fd(::socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fail("failed to check /healthz: {}", std::strerror(errno));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&storage), length) != 0 && errno != EINPROGRESS) {
    return fail("failed to check /healthz: {}", std::strerror(errno));
  }
  if (!wait_for(fd.get(), POLLOUT, deadline)) return fail("failed to check /healthz: no connection within {} ms", timeout.count());
  int error = 0;
  socklen_t error_length = sizeof error;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &error_length) != 0 || error != 0) {
    return fail("failed to check /healthz: {}", std::strerror(error != 0 ? error : errno));
  }
  constexpr std::string_view request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  // The request fits any socket buffer: one send, or a failure.
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    return fail("failed to check /healthz: the request could not be sent");
  }
  std::string answer;
  while (answer.find("\r\n") == std::string::npos && answer.size() < 256) {
    if (!wait_for(fd.get(), POLLIN, deadline)) return fail("failed to check /healthz: no answer within {} ms", timeout.count());
    char buffer[256];
    const auto n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return fail("failed to check /healthz: {}", std::strerror(errno));
    }
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  const auto line = answer.substr(0, answer.find("\r\n"));
  if (!line.starts_with("HTTP/1.1 200 ") && !line.starts_with("HTTP/1.0 200 ")) {
    return fail("failed to check /healthz: it answered \"{}\"", line.substr(0, 80));
  }
  return {};
}

}  // namespace hwimg::serve
