#pragma once
// A small HTTP/1.1 server on libmicrohttpd's event loop (docs/serve.md#limits): a few threads
// take every connection, so a connection costs a descriptor and a little memory, not a thread.
// Answers that need no I/O are given on the event loop itself; the others are made by a bounded
// set of fetch workers, which may block, while their connection waits suspended; a streamed body
// goes from the worker to the client only as fast as the client takes it.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hwimg/serve/http_message.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::serve {

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
  // Called at the stop once the grace is over, before the fetch workers are joined: makes what
  // they still wait for (upstream exchanges) end. May be empty.
  std::function<void()> grace_over;
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
  // Stops accepting, lets the requests in flight finish for up to `grace`, then calls
  // `grace_over` and closes.
  void shutdown(std::chrono::milliseconds grace);

  struct State;  // internal: what libmicrohttpd's callbacks see

private:
  explicit HttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

}  // namespace hwimg::serve
