#pragma once
// One libcurl multi handle running many HTTP exchanges at once, for every registry wherever it is:
// connection reuse, TLS session reuse across connections and threads (libcurl's share interface),
// HTTP/2 where the server offers it, TLS verification, timeouts and a size limit on every response
// body. Redirects are followed here, by one rule (follow_redirect in http.cpp).
// Callbacks run on the thread that calls run(); they may submit further requests.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwimg/registry/cancellation.hpp"
#include "hwimg/registry/detail/url.hpp"
#include "hwimg/registry/response.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::registry {

enum class Method { get, head, post, put, patch, del };
[[nodiscard]] std::string_view method_name(Method method);

// A request body streamed from part of a file (a blob in an image layout), or read in order from a
// pipe (a blob relayed from another registry), which cannot be sent a second time.
struct FileBody {
  std::filesystem::path path;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  int pipe = -1;  // >= 0: read this descriptor (kept open by the caller) instead of `path`
};

enum class Channel { multiplexed, bulk };

// A streamed body's reader's answer to a piece of it (Request::on_body_data).
enum class BodyIntake {
  taken,  // keep them coming
  full,   // not taken: the exchange stops reading until Transport::resume_bodies(), then offers it again
  stop,   // abort the exchange
};

struct Request {
  Request() = default;
  Request(Method m, std::string u) : method(m), url(std::move(u)) {}

  Method method = Method::get;
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::optional<FileBody> file_body;  // used instead of `body` when set
  std::size_t max_response_body = std::size_t{1} << 20;
  // GET/HEAD only; Authorization is never sent to another origin (scheme, host or port).
  bool follow_redirects = false;
  // Bulk transfers go over their own HTTP/1.1 connections: on one multiplexed HTTP/2 connection
  // the server decrypts and flow-controls every upload on a single stream of TLS records.
  Channel channel = Channel::multiplexed;
  // Sees every chunk of a file body as curl reads it: (offset within the body, bytes).
  std::function<void(std::uint64_t, std::string_view)> on_body_read;
  // Streaming (a mirror passing blobs through): called when a response body begins, status and
  // headers known; returning true sends that body to on_body_data instead of Response::body.
  std::function<bool(const Response&)> on_response_start;
  // Each piece of a streamed body; BodyIntake::full holds the rest in the socket, so that a slow
  // reader slows the sender instead of filling memory.
  std::function<BodyIntake(std::string_view)> on_body_data;
};

struct TransportOptions {
  std::filesystem::path ca_file;  // empty: the system store
  bool verify_tls = true;
  util::Output* output = &util::null_output();  // logs one line per exchange, secrets redacted
  std::chrono::seconds connect_timeout{30};
  std::chrono::seconds stall_timeout{60};  // abort when nothing moves for this long
  long max_host_connections = 8;           // further exchanges wait for a free connection
  std::shared_ptr<const Cancellation> cancellation;  // looked at in every turn of run_until; may be null
};

class Transport {
public:
  [[nodiscard]] static Result<Transport> create(TransportOptions options);
  Transport(Transport&&) noexcept;
  Transport& operator=(Transport&&) noexcept;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  ~Transport();

  void submit(Request request, std::function<void(Response)> done);
  void after(std::chrono::milliseconds delay, std::function<void()> action);
  // Runs until no exchange and no timer is left.
  [[nodiscard]] Result<void> run();
  // Runs until `stop` holds (checked after each step) or nothing is left; a streamed body is read
  // only as fast as the caller asks for it this way, so a slow reader slows the sender. Once the
  // cancellation's limit passed with nothing moving (counted from this call), every exchange ends
  // with TransportFailure::cancelled and waiting retries go at once, to meet it in turn.
  [[nodiscard]] Result<void> run_until(const std::function<bool()>& stop);
  // Lets the bodies whose reader was full read on. libcurl may hand a held-back piece to
  // on_body_data from within this call, and a reader that is still full pauses it again.
  void resume_bodies();

  [[nodiscard]] std::uint64_t exchanges() const;  // requests sent so far

private:
  struct State;
  explicit Transport(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

// The next page of a paginated answer (tags/list) from its `Link: <url>; rel="next"` headers,
// unresolved; empty when there is none.
[[nodiscard]] std::string next_page_link(const Response& r);

// Why an answer's body was cut off at `limit` bytes; an error status is kept in the text.
[[nodiscard]] std::string too_large_error(long status, std::size_t limit);

// Redirects an exchange follows at most.
inline constexpr int max_followed_redirects = 5;

}  // namespace hwimg::registry
