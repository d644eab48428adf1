#include "hwimg/registry/detail/plain_http.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <http_parser.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hwimg/registry/reference.hpp"
#include "hwimg/util/fd.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::registry {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int max_redirects = 5;

struct Target {
  std::string host;       // without brackets
  std::string port;
  std::string authority;  // host[:port] as written, for Host: and the connection pool
  std::string path;       // path and query
};

std::optional<Target> parse_target(std::string_view url) {
  http_parser_url parts{};
  http_parser_url_init(&parts);
  if (http_parser_parse_url(url.data(), url.size(), 0, &parts) != 0) return std::nullopt;
  const auto field = [&](int which) {
    return (parts.field_set & (1 << which)) != 0 ? url.substr(parts.field_data[which].off, parts.field_data[which].len)
                                                 : std::string_view();
  };
  if (field(UF_SCHEMA) != "http") return std::nullopt;
  Target target;
  target.host = std::string(field(UF_HOST));
  target.port = (parts.field_set & (1 << UF_PORT)) != 0 ? std::string(field(UF_PORT)) : "80";
  target.authority = target.host.find(':') != std::string::npos ? "[" + target.host + "]" : target.host;
  if ((parts.field_set & (1 << UF_PORT)) != 0) target.authority += ":" + target.port;
  target.path = field(UF_PATH).empty() ? "/" : std::string(field(UF_PATH));
  if (const auto query = field(UF_QUERY); !query.empty()) target.path += "?" + std::string(query);
  return target;
}

}  // namespace

struct PlainHttp::Exchange {
  Request request;
  std::function<void(Response)> done;
  Response response;
  Target target;
  util::UniqueFd socket;
  enum class Phase { connecting, sending, receiving, finished } phase = Phase::connecting;
  std::string out;
  std::size_t sent = 0;
  http_parser parser{};
  std::string field;
  std::string value;
  bool in_value = false;
  bool reused = false;      // a kept-alive connection, which the server may have closed meanwhile
  bool received = false;    // any byte of the answer
  bool complete = false;
  bool streaming = false;
  int redirects = 0;
  Clock::time_point started;
  Clock::time_point last_activity;

  void fail(TransportFailure failure, std::string error) {
    response.failure = failure;
    response.error = std::move(error);
    phase = Phase::finished;
  }
};

namespace {

using Exchange = PlainHttp::Exchange;

Exchange& of(http_parser* parser) {
  return *static_cast<Exchange*>(parser->data);
}

void end_header(Exchange& e) {
  if (!e.in_value) return;
  e.response.headers.emplace_back(util::to_lower(util::trim(e.field)), std::string(util::trim(e.value)));
  e.field.clear();
  e.value.clear();
  e.in_value = false;
}

int on_header_field(http_parser* parser, const char* at, std::size_t length) {
  auto& e = of(parser);
  end_header(e);
  e.field.append(at, length);
  return 0;
}

int on_header_value(http_parser* parser, const char* at, std::size_t length) {
  auto& e = of(parser);
  e.value.append(at, length);
  e.in_value = true;
  return 0;
}

int on_headers_complete(http_parser* parser) {
  auto& e = of(parser);
  end_header(e);
  e.response.status = parser->status_code;
  if (e.request.method == Method::head) return 1;  // a HEAD answer has no body, whatever its length says
  e.streaming = e.request.on_response_start && e.request.on_response_start(e.response);
  return 0;
}

int on_body(http_parser* parser, const char* at, std::size_t length) {
  auto& e = of(parser);
  if (e.streaming) {
    if (e.request.on_body_data(std::string_view(at, length))) return 0;
    e.fail(TransportFailure::other, "the reader stopped reading");
    return 1;
  }
  if (e.response.body.size() + length > e.request.max_response_body) {
    e.fail(TransportFailure::too_large,
           fmt::format("response body exceeds the limit of {} bytes", e.request.max_response_body));
    return 1;
  }
  e.response.body.append(at, length);
  return 0;
}

int on_message_complete(http_parser* parser) {
  of(parser).complete = true;
  return 0;
}

const http_parser_settings& settings() {
  static const http_parser_settings table = [] {
    http_parser_settings s{};
    http_parser_settings_init(&s);
    s.on_header_field = on_header_field;
    s.on_header_value = on_header_value;
    s.on_headers_complete = on_headers_complete;
    s.on_body = on_body;
    s.on_message_complete = on_message_complete;
    return s;
  }();
  return table;
}

std::string request_text(const Request& request, const Target& target) {
  auto text = fmt::format("{} {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: hwimg/{}\r\n", method_name(request.method),
                          target.path, target.authority, HWIMG_VERSION);
  for (const auto& header : request.headers) text += header + "\r\n";
  const bool has_body = request.method == Method::post || request.method == Method::put ||
                        request.method == Method::patch || !request.body.empty();
  if (has_body) text += fmt::format("Content-Length: {}\r\n", request.body.size());
  text += "\r\n";
  text += request.body;
  return text;
}

// A connected (or connecting) non-blocking socket to the target.
Result<util::UniqueFd> open_socket(const Target& target) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int code = ::getaddrinfo(target.host.c_str(), target.port.c_str(), &hints, &found); code != 0) {
    return fail("failed to resolve {}: {}", target.host, ::gai_strerror(code));
  }
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);
  int error = 0;
  for (const auto* a = addresses.get(); a != nullptr; a = a->ai_next) {
    util::UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) {
      error = errno;
      continue;
    }
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) return fd;
    error = errno;
  }
  return fail("failed to connect to {}: {}", target.authority, util::errno_text(error));
}

}  // namespace

PlainHttp::PlainHttp(const TransportOptions& options, std::function<void(Request, Done)> elsewhere)
    : m_options(options), m_elsewhere(std::move(elsewhere)) {}

PlainHttp::~PlainHttp() {
  for (const auto& [authority, fd] : m_idle) ::close(fd);
}

bool PlainHttp::takes(const Request& request) {
  if (request.file_body || !request.url.starts_with("http://")) return false;
  const auto target = parse_target(request.url);
  return target && is_loopback_host(target->host);
}

void PlainHttp::submit(Request request, Done done, int redirects) {
  auto exchange = std::make_unique<Exchange>();
  auto& e = *exchange;
  e.request = std::move(request);
  e.done = std::move(done);
  e.redirects = redirects;
  e.started = e.last_activity = Clock::now();
  e.response.url = e.request.url;
  http_parser_init(&e.parser, HTTP_RESPONSE);
  e.parser.data = &e;
  m_exchanges.push_back(std::move(exchange));
  auto target = parse_target(e.request.url);
  if (!target) return e.fail(TransportFailure::other, fmt::format("invalid URL {}", redact_url(e.request.url)));
  e.target = std::move(*target);
  e.out = request_text(e.request, e.target);
  if (const auto idle = m_idle.find(e.target.authority); idle != m_idle.end()) {
    e.socket = util::UniqueFd(idle->second);
    m_idle.erase(idle);
    e.reused = true;
    e.phase = Exchange::Phase::sending;
    return;
  }
  auto socket = open_socket(e.target);
  if (!socket) return e.fail(TransportFailure::connect, socket.error().message);
  e.socket = std::move(*socket);
}

void PlainHttp::poll_set(std::vector<pollfd>& fds) const {
  for (const auto& e : m_exchanges) {
    if (e->phase == Exchange::Phase::finished || !e->socket.valid()) continue;
    const short events = e->phase == Exchange::Phase::receiving ? POLLIN : POLLOUT;
    fds.push_back({e->socket.get(), events, 0});
  }
}

namespace {

// Moves one exchange on; returns false when the kept-alive connection it used turned out closed
// before any answer, so it should start again on a fresh one.
bool advance(Exchange& e, const TransportOptions& options) {
  using Phase = Exchange::Phase;
  const auto now = Clock::now();
  const auto limit = e.phase == Phase::connecting ? options.connect_timeout : options.stall_timeout;
  if (now - e.last_activity > limit) {
    e.fail(TransportFailure::timeout, fmt::format("no progress for {} s", limit.count()));
    return true;
  }
  if (e.phase == Phase::connecting) {
    pollfd fd{e.socket.get(), POLLOUT, 0};
    if (::poll(&fd, 1, 0) <= 0) return true;
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(e.socket.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      e.fail(TransportFailure::connect, fmt::format("failed to connect to {}: {}", e.target.authority,
                                                    util::errno_text(error)));
      return true;
    }
    e.phase = Phase::sending;
    e.last_activity = now;
  }
  if (e.phase == Phase::sending) {
    while (e.sent < e.out.size()) {
      const auto n = ::send(e.socket.get(), e.out.data() + e.sent, e.out.size() - e.sent, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
      if (n < 0) {
        if (e.reused) return false;
        e.fail(TransportFailure::connect, fmt::format("failed to send to {}: {}", e.target.authority,
                                                      util::errno_text(errno)));
        return true;
      }
      e.sent += static_cast<std::size_t>(n);
      e.last_activity = now;
    }
    e.phase = Phase::receiving;
  }
  char buffer[65536];
  while (e.phase == Phase::receiving) {
    const auto n = ::recv(e.socket.get(), buffer, sizeof buffer, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    if (n <= 0 && e.reused && !e.received) return false;
    if (n < 0) {
      e.fail(TransportFailure::connect, fmt::format("failed to read from {}: {}", e.target.authority,
                                                    util::errno_text(errno)));
      return true;
    }
    e.received = e.received || n > 0;
    e.last_activity = now;
    // A length of 0 tells the parser the connection closed (the end of a body read to EOF).
    const auto length = static_cast<std::size_t>(n);
    const auto parsed = http_parser_execute(&e.parser, &settings(), buffer, length);
    if (e.phase == Phase::finished) return true;  // a callback failed it
    if (e.complete) {
      e.phase = Phase::finished;
      return true;
    }
    if (n == 0) {
      e.fail(e.received ? TransportFailure::truncated : TransportFailure::connect,
             e.received ? "the connection closed before the whole response arrived"
                        : fmt::format("{} closed the connection without answering", e.target.authority));
      return true;
    }
    if (parsed != length || HTTP_PARSER_ERRNO(&e.parser) != HPE_OK) {
      e.fail(TransportFailure::other,
             fmt::format("invalid HTTP response: {}", http_errno_description(HTTP_PARSER_ERRNO(&e.parser))));
      return true;
    }
  }
  return true;
}

}  // namespace

std::size_t PlainHttp::step() {
  for (auto& e : m_exchanges) {
    if (e->phase == Exchange::Phase::finished) continue;
    if (!advance(*e, m_options)) {
      // The kept-alive connection was closed by the server: once more on a fresh one.
      auto request = std::move(e->request);
      auto done = std::move(e->done);
      e->phase = Exchange::Phase::finished;
      e->done = nullptr;
      submit(std::move(request), std::move(done), e->redirects);
    }
  }
  std::size_t finished = 0;
  for (auto it = m_exchanges.begin(); it != m_exchanges.end();) {
    if ((*it)->phase != Exchange::Phase::finished) {
      ++it;
      continue;
    }
    auto exchange = std::move(*it);
    it = m_exchanges.erase(it);
    if (exchange->done) {
      finish(*exchange);
      ++finished;
    }
  }
  return finished;
}

void PlainHttp::finish(Exchange& e) {
  if (e.response.ok() && e.complete && http_should_keep_alive(&e.parser) != 0 && e.socket.valid()) {
    m_idle.emplace(e.target.authority, e.socket.release());
  }
  auto& response = e.response;
  if (m_options.output->logging()) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - e.started).count();
    m_options.output->log(fmt::format("{} {} -> {} ({} ms)", method_name(e.request.method),
                                      redact_url(e.request.url), response.ok() ? std::to_string(response.status)
                                                                               : response.error,
                                      ms));
  }
  const auto location = response.header("location");
  const bool redirect = response.ok() && response.status >= 300 && response.status < 400 && location;
  if (redirect && e.request.follow_redirects && e.redirects < max_redirects) {
    auto next = e.request;
    next.url = resolve_url(e.request.url, *location);
    const auto from = parse_target(e.request.url);
    const auto to = parse_target(next.url);
    // Credentials never follow a redirect to another host, as with libcurl.
    if (!from || !to || from->authority != to->authority) {
      std::erase_if(next.headers, [](const std::string& h) { return util::to_lower(h).starts_with("authorization:"); });
    }
    if (takes(next)) return submit(std::move(next), std::move(e.done), e.redirects + 1);
    return m_elsewhere(std::move(next), std::move(e.done));
  }
  e.done(std::move(response));
}

}  // namespace hwimg::registry
