#pragma once
// A small HTTP/1.1 server on libmicrohttpd, one thread per connection: handlers may block, and a
// streamed body is produced only as fast as the client takes it. Requests and responses are plain
// values, so the mirror's logic is tested without sockets.

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

using Handler = std::function<HttpResponse(const HttpRequest&)>;

struct ServerSettings {
  std::string address = "127.0.0.1";  // IPv4 or IPv6 literal
  std::uint16_t port = 5050;          // 0: any free port
  unsigned connection_limit = 1024;
  std::chrono::seconds idle_timeout{120};
  util::Output* output = &util::null_output();  // the library's own error messages
};

class HttpServer {
public:
  [[nodiscard]] static Result<std::unique_ptr<HttpServer>> start(const ServerSettings& settings, Handler handler);
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer();

  [[nodiscard]] std::uint16_t port() const;
  // Stops accepting, lets the requests in flight finish for up to `grace`, then closes.
  void shutdown(std::chrono::milliseconds grace);

  struct State;  // internal: what libmicrohttpd's callbacks see

private:
  explicit HttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

}  // namespace hwimg::serve
