#pragma once
// Internal to the HTTP transport: HTTP/1.1 to registries on this machine, plain or over TLS
// (OpenSSL, linked statically), without libcurl, whose dependency chain (Kerberos, LDAP, IDN, ...)
// takes 3.5 ms to load, most of a local `hwimg select`. Responses are parsed by http-parser;
// uploads from files, and every other registry, stay with libcurl.

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

class LocalHttp {
public:
  using Done = std::function<void(Response)>;
  // `elsewhere` takes a redirect that leaves this engine (to another host), with the number of
  // redirects followed so far.
  using Elsewhere = std::function<void(Request, Done, int)>;
  LocalHttp(const TransportOptions& options, Elsewhere elsewhere);
  LocalHttp(const LocalHttp&) = delete;
  LocalHttp& operator=(const LocalHttp&) = delete;
  ~LocalHttp();

  // Requests this engine takes: http:// or https:// to a loopback host, with no file body.
  [[nodiscard]] static bool takes(const Request& request);

  void submit(Request request, Done done, int redirects = 0);
  [[nodiscard]] bool busy() const { return !m_exchanges.empty(); }
  // The sockets to wait on, and for what.
  void poll_set(std::vector<pollfd>& fds) const;
  // Moves every exchange on as far as its socket allows; finished ones call their `done` (which
  // may submit more). Returns how many finished.
  std::size_t step();

  struct Exchange;
  struct Connection;
  struct Tls;

private:
  void finish(Exchange& exchange);
  void connect(Exchange& exchange);
  [[nodiscard]] Result<void> start(Exchange& exchange);
  void remember_session(const Exchange& exchange);
  [[nodiscard]] std::size_t connections_in_use(const std::string& origin) const;

  const TransportOptions& m_options;
  Elsewhere m_elsewhere;
  std::list<std::unique_ptr<Exchange>> m_exchanges;
  std::multimap<std::string, std::unique_ptr<Connection>> m_idle;  // scheme://authority -> kept alive
  std::unique_ptr<Tls> m_tls;                                        // the TLS context, made when first needed
};

}  // namespace hwimg::registry
