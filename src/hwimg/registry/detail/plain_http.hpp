#pragma once
// Internal to the HTTP transport: plain HTTP/1.1 to registries on this machine without libcurl,
// whose dependency chain (TLS, Kerberos, LDAP, IDN, ...) takes 3.5 ms to load, most of a local
// `hwimg select`. Responses are parsed by http-parser; uploads from files stay with libcurl.

#include <chrono>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <poll.h>

#include "hwimg/registry/detail/http.hpp"

namespace hwimg::registry {

class PlainHttp {
public:
  using Done = std::function<void(Response)>;
  // `elsewhere` takes a redirect that leaves this engine (to https://).
  PlainHttp(const TransportOptions& options, std::function<void(Request, Done)> elsewhere);
  PlainHttp(const PlainHttp&) = delete;
  PlainHttp& operator=(const PlainHttp&) = delete;
  ~PlainHttp();

  // Requests this engine takes: http:// to a loopback host, with no file body.
  [[nodiscard]] static bool takes(const Request& request);

  void submit(Request request, Done done, int redirects = 0);
  [[nodiscard]] bool busy() const { return !m_exchanges.empty(); }
  // The sockets to wait on, and for what.
  void poll_set(std::vector<pollfd>& fds) const;
  // Moves every exchange on as far as its socket allows; finished ones call their `done` (which
  // may submit more). Returns how many finished.
  std::size_t step();

  struct Exchange;

private:
  void finish(Exchange& exchange);

  const TransportOptions& m_options;
  std::function<void(Request, Done)> m_elsewhere;
  std::list<std::unique_ptr<Exchange>> m_exchanges;
  std::multimap<std::string, int> m_idle;  // authority -> kept-alive connection
};

}  // namespace hwimg::registry
