#include "hwimg/serve/systemd_notify.hpp"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <cstddef>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace hwimg::serve {
namespace {

std::optional<std::string_view> variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string_view(value);
}

std::optional<std::uint64_t> number(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

SystemdNotifier::SystemdNotifier(util::UniqueFd socket, std::string address,
                                 std::optional<std::chrono::microseconds> watchdog)
    : m_socket(std::move(socket)), m_address(std::move(address)), m_watchdog(watchdog) {}

Result<std::optional<SystemdNotifier>> SystemdNotifier::from_environment() {
  const auto socket = variable("NOTIFY_SOCKET");
  if (!socket) return std::optional<SystemdNotifier>();
  std::optional<std::chrono::microseconds> watchdog;
  const auto pid = variable("WATCHDOG_PID");
  // WATCHDOG_PID names the process the watchdog is for: not this one when it was inherited.
  const bool ours = !pid || number(*pid) == static_cast<std::uint64_t>(::getpid());
  if (const auto usec = variable("WATCHDOG_USEC"); usec && ours) {
    const auto value = number(*usec);
    if (!value || *value == 0) return fail("failed to read WATCHDOG_USEC \"{}\": not a positive number", *usec);
    watchdog = std::chrono::microseconds(*value);
  }
  HWIMG_TRY_ASSIGN(auto notifier, open(*socket, watchdog));
  return std::optional<SystemdNotifier>(std::move(notifier));
}

Result<SystemdNotifier> SystemdNotifier::open(std::string_view socket,
                                              std::optional<std::chrono::microseconds> watchdog) {
  const bool abstract = socket.starts_with('@');
  if (!abstract && !socket.starts_with('/')) {
    return fail("failed to use NOTIFY_SOCKET \"{}\": not an absolute path nor an abstract socket (@NAME)", socket);
  }
  if (socket.size() >= sizeof(sockaddr_un::sun_path)) {
    return fail("failed to use NOTIFY_SOCKET \"{}\": longer than a unix socket address can be", socket);
  }
  std::string address(socket);
  if (abstract) address[0] = '\0';
  util::UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fail("failed to open a socket for NOTIFY_SOCKET: {}", std::strerror(errno));
  return SystemdNotifier(std::move(fd), std::move(address), watchdog);
}

Result<void> SystemdNotifier::notify(std::string_view state) const {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, m_address.data(), m_address.size());
  // An abstract address is as long as its name; a path ends at its terminating zero.
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + m_address.size() +
                                             (m_address.front() == '\0' ? 0 : 1));
  const auto sent = ::sendto(m_socket.get(), state.data(), state.size(), MSG_NOSIGNAL,
                             reinterpret_cast<const sockaddr*>(&address), length);
  if (sent < 0) return fail("failed to notify systemd ({}): {}", state, std::strerror(errno));
  if (static_cast<std::size_t>(sent) != state.size()) return fail("failed to notify systemd ({}): sent in part", state);
  return {};
}

}  // namespace hwimg::serve
