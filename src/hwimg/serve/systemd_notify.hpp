#pragma once
// Telling systemd how `serve` is doing (docs/serve.md#keeping-it-up): READY=1 once it listens,
// WATCHDOG=1 while /healthz answers, STOPPING=1 on SIGTERM. The protocol of sd_notify(3),
// written here rather than linking libsystemd: one datagram of "KEY=VALUE" lines to the unix
// socket named by $NOTIFY_SOCKET (a leading '@' names an abstract socket).

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "hwimg/util/error.hpp"
#include "hwimg/util/fd.hpp"

namespace hwimg::serve {

class SystemdNotifier {
public:
  // From $NOTIFY_SOCKET, with the watchdog interval of $WATCHDOG_USEC when $WATCHDOG_PID is unset
  // or this process; nullopt when no service manager listens.
  [[nodiscard]] static Result<std::optional<SystemdNotifier>> from_environment();
  [[nodiscard]] static Result<SystemdNotifier> open(std::string_view socket,
                                                    std::optional<std::chrono::microseconds> watchdog);

  // Sends `state`, such as "READY=1" or "WATCHDOG=1".
  [[nodiscard]] Result<void> notify(std::string_view state) const;
  // How often systemd wants WATCHDOG=1 (WatchdogSec=); nullopt without a watchdog.
  [[nodiscard]] std::optional<std::chrono::microseconds> watchdog() const { return m_watchdog; }

private:
  SystemdNotifier(util::UniqueFd socket, std::string address, std::optional<std::chrono::microseconds> watchdog);

  util::UniqueFd m_socket;
  std::string m_address;  // the sockaddr_un path bytes, '\0' first for an abstract socket
  std::optional<std::chrono::microseconds> m_watchdog;
};

}  // namespace hwimg::serve
