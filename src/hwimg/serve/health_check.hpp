#pragma once
// `serve` asking itself for /healthz over its own listening socket, as the kubelet's liveness
// probe does, before it tells systemd's watchdog that all is well: a process whose main thread
// runs while its server answers nobody must not count as alive.

#include <chrono>
#include <cstdint>
#include <string>

#include "hwimg/util/error.hpp"

namespace hwimg::serve {

// GET /healthz on `address`:`port` (an unspecified address, 0.0.0.0 or ::, means this machine's
// loopback); fails unless it answers 200 within `timeout`.
[[nodiscard]] Result<void> check_health(const std::string& address, std::uint16_t port,
                                        std::chrono::milliseconds timeout);

}  // namespace hwimg::serve
