#pragma once
// `hwimg serve`: the mirror on its HTTP server, the node's facts kept fresh, systemd told how it
// does, until SIGTERM.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "hwimg/probe/probe.hpp"
#include "hwimg/serve/http_server.hpp"
#include "hwimg/serve/mirror.hpp"
#include "hwimg/serve/upstreams.hpp"

namespace hwimg::serve {

struct ServeOptions {
  std::string listen = "127.0.0.1:5050";            // ADDRESS:PORT or [IPv6]:PORT; port 0: any
  UpstreamSettings upstreams;
  std::optional<std::filesystem::path> host_file;  // facts from this file instead of probing
  probe::ProbeOptions probe;                        // how to probe when there is no host file
  MirrorSettings mirror;
  ServerSettings http;                              // limits and timeouts (address, port, output: from above)
  std::chrono::milliseconds refresh{600'000};       // --refresh: facts loaded again this often
  std::chrono::milliseconds upstream_check{60'000}; // --upstream-check: upstreams checked again this often
  std::chrono::milliseconds grace{10'000};          // requests in flight may finish this long on SIGTERM
  util::Output* output = &util::null_output();      // one line per resolution, warnings
};

// Serves until SIGTERM or SIGINT (then lets requests in flight finish); SIGHUP reloads the facts.
// Under systemd ($NOTIFY_SOCKET): READY=1 once listening, WATCHDOG=1 while /healthz answers.
[[nodiscard]] Result<int> run_server(const ServeOptions& options);

// "127.0.0.1:5050" or "[::1]:5050" split into address and port.
[[nodiscard]] Result<std::pair<std::string, std::uint16_t>> parse_listen_address(std::string_view text);

}  // namespace hwimg::serve
