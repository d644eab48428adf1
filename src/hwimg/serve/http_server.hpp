#pragma once
// A small HTTP/1.1 server on libmicrohttpd's event loop (docs/serve.md#limits): a few threads
// take every connection, so a connection costs a descriptor and a little memory, not a thread.
// Answers that need no I/O are given on the event loop itself; the others are made by a bounded
// set of fetch workers, which may block, while their connection waits suspended; a streamed body
// goes from the worker to the client only as fast as the client takes it. Requests and responses
// are plain values, so the mirror's logic is tested without sockets.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwimg/util/error.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::serve {

using Fields = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "HEAD", ...
  std::string path;    // URL path, percent-decoded by the server
  Fields query;        // in order
  Fields headers;      // names lower-cased; a repeated header appears once per line

  [[nodiscard]] std::optional<std::string> header(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> header_values(std::string_view name) const;
  [[nodiscard]] std::optional<std::string> query_value(std::string_view name) const;
};

// The next piece of a streamed body; nullopt at its end; an error cuts the connection, so the
// client sees a short body rather than a wrong one.
using BodySource = std::function<Result<std::optional<std::string>>()>;

struct HttpResponse {
  unsigned status = 200;
  Fields headers;
  std::string body;
  BodySource stream;                         // set: the body comes from here instead of `body`
  std::optional<std::uint64_t> stream_size;  // its Content-Length, when known

  [[nodiscard]] std::optional<std::string> header(std::string_view name) const;
};

struct Handlers {
  // On the event loop, so it must not block: the answers that need no upstream (health, metrics,
  // refusals, answers kept in memory); nullopt sends the request to `fetch`.
  std::function<std::optional<HttpResponse>(const HttpRequest&)> immediate;
  // On a fetch worker: may block on upstreams; a streamed body is read on the worker too.
  std::function<HttpResponse(const HttpRequest&)> fetch;
  // The answer when neither gave one: 500 after an exception, 503 when no worker was free within
  // the wait or the server stops; `message` says which.
  std::function<HttpResponse(unsigned status, std::string_view message)> failure;
};

struct ServerSettings {
  std::string address = "127.0.0.1";  // IPv4 or IPv6 literal
  std::uint16_t port = 5050;          // 0: any free port
  unsigned connection_limit = 4096;   // open connections in all
  unsigned client_limit = 1024;       // open connections from one client address
  std::chrono::milliseconds header_timeout{10'000};  // to send a whole request header
  std::chrono::milliseconds idle_timeout{120'000};   // with nothing sent or received
  unsigned fetch_limit = 256;                        // fetch workers at once
  std::chrono::milliseconds fetch_wait{30'000};      // the longest a request waits for a worker
  unsigned event_threads = 2;
  util::Output* output = &util::null_output();  // the library's own messages, exceptions caught
};

// What the server holds at a moment, and counts since its start.
struct ServerLoad {
  std::size_t connections = 0;
  std::size_t fetches_running = 0;
  std::size_t fetches_waiting = 0;
  std::uint64_t busy_refusals = 0;    // 503 because no worker was free within the wait
  std::uint64_t header_timeouts = 0;  // connections shut for want of a request header in time
};

class HttpServer {
public:
  [[nodiscard]] static Result<std::unique_ptr<HttpServer>> start(const ServerSettings& settings, Handlers handlers);
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer();

  [[nodiscard]] std::uint16_t port() const;
  [[nodiscard]] ServerLoad load() const;
  // Stops accepting, lets the requests in flight finish for up to `grace`, then closes.
  void shutdown(std::chrono::milliseconds grace);

  struct State;  // internal: what libmicrohttpd's callbacks see

private:
  explicit HttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

}  // namespace hwimg::serve
