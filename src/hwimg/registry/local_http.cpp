#include "hwimg/registry/detail/local_http.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <http_parser.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hwimg/registry/reference.hpp"
#include "hwimg/util/fd.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::registry {
namespace {

using Clock = std::chrono::steady_clock;

struct Target {
  bool tls = false;
  std::string host;       // without brackets
  std::string port;
  std::string authority;  // host[:port] as written, for Host:
  std::string origin;     // scheme://authority, for the connection pool
  std::string path;       // path and query
};

std::optional<Target> parse_target(std::string_view url) {
  http_parser_url parts{};
  http_parser_url_init(&parts);
  if (http_parser_parse_url(url.data(), url.size(), 0, &parts) != 0) return std::nullopt;
  const auto has = [&](int which) { return (parts.field_set & (1 << which)) != 0; };
  const auto field = [&](int which) {
    return has(which) ? url.substr(parts.field_data[which].off, parts.field_data[which].len) : std::string_view();
  };
  const auto scheme = field(UF_SCHEMA);
  if (scheme != "http" && scheme != "https") return std::nullopt;
  Target target;
  target.tls = scheme == "https";
  target.host = std::string(field(UF_HOST));
  target.port = has(UF_PORT) ? std::string(field(UF_PORT)) : target.tls ? "443" : "80";
  target.authority = target.host.find(':') != std::string::npos ? "[" + target.host + "]" : target.host;
  if (has(UF_PORT)) target.authority += ":" + target.port;
  target.origin = std::string(scheme) + "://" + target.authority;
  target.path = field(UF_PATH).empty() ? "/" : std::string(field(UF_PATH));
  if (const auto query = field(UF_QUERY); !query.empty()) target.path += "?" + std::string(query);
  return target;
}

struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};
using SslHandle = std::unique_ptr<SSL, SslFree>;

struct SslContextFree {
  void operator()(SSL_CTX* context) const { SSL_CTX_free(context); }
};

struct SslSessionFree {
  void operator()(SSL_SESSION* session) const { SSL_SESSION_free(session); }
};

// OpenSSL's reason for the last failure, or `fallback`.
std::string openssl_error(std::string_view fallback) {
  const auto code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return std::string(fallback);
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

}  // namespace

// A connection that outlives one exchange: its socket and, over TLS, its session.
struct LocalHttp::Connection {
  util::UniqueFd socket;
  SslHandle tls;
};

// One TLS client context for every connection: the trust anchors are read once. A session per
// origin lets later connections resume (no certificate sent, checked or signed for again), which
// is most of what a handshake costs a short push on few cores.
struct LocalHttp::Tls {
  std::unique_ptr<SSL_CTX, SslContextFree> context;
  std::map<std::string, std::unique_ptr<SSL_SESSION, SslSessionFree>> sessions;
};

struct LocalHttp::Exchange {
  Request request;
  std::function<void(Response)> done;
  Response response;
  Target target;
  Connection connection;
  // queued: waiting for one of the origin's connections (at most max_local_connections at once).
  enum class Phase { queued, connecting, handshaking, sending, receiving, finished } phase = Phase::connecting;
  short wants = POLLOUT;  // what the socket must become before the next step can move
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

using Exchange = LocalHttp::Exchange;

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
    e.fail(TransportFailure::too_large, too_large_error(static_cast<long>(parser->status_code),
                                                        e.request.max_response_body));
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
    // Requests are written whole; Nagle's algorithm would hold a TLS record back for the server's
    // delayed ACK (40 ms), as libcurl avoids too.
    const int on = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) return fd;
    error = errno;
  }
  return fail("failed to connect to {}: {}", target.authority, util::errno_text(error));
}

bool is_ip_address(const std::string& host) {
  unsigned char buffer[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), buffer) == 1 || ::inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

// Result of a read or write on the connection: bytes moved, the end of the stream, or a wait.
enum class Io { moved, end, wait, error };

// Wraps SSL_read/SSL_write/recv/send: sets `e.wants` when the connection must wait.
Io transfer(Exchange& e, bool write, char* data, std::size_t size, std::size_t& moved, std::string& error) {
  moved = 0;
  if (auto* tls = e.connection.tls.get()) {
    const int n = write ? SSL_write(tls, data, static_cast<int>(size)) : SSL_read(tls, data, static_cast<int>(size));
    if (n > 0) {
      moved = static_cast<std::size_t>(n);
      return Io::moved;
    }
    switch (SSL_get_error(tls, n)) {
      case SSL_ERROR_WANT_READ: e.wants = POLLIN; return Io::wait;
      case SSL_ERROR_WANT_WRITE: e.wants = POLLOUT; return Io::wait;
      case SSL_ERROR_ZERO_RETURN: return Io::end;
      case SSL_ERROR_SYSCALL:
        if (errno == 0 || errno == ECONNRESET || errno == EPIPE) return Io::end;
        error = util::errno_text(errno);
        return Io::error;
      default: error = openssl_error("TLS error"); return Io::error;
    }
  }
  const auto n = write ? ::send(e.connection.socket.get(), data, size, MSG_NOSIGNAL)
                       : ::recv(e.connection.socket.get(), data, size, 0);
  if (n > 0) {
    moved = static_cast<std::size_t>(n);
    return Io::moved;
  }
  if (n == 0) return Io::end;
  if (errno == EAGAIN || errno == EINTR) {
    e.wants = write ? POLLOUT : POLLIN;
    return Io::wait;
  }
  if (errno == ECONNRESET || errno == EPIPE) return Io::end;
  error = util::errno_text(errno);
  return Io::error;
}

// Moves one exchange on; returns false when the kept-alive connection it used turned out closed
// before any answer, so it should start again on a fresh one.
bool advance(Exchange& e, const TransportOptions& options) {
  using Phase = Exchange::Phase;
  if (e.phase == Phase::queued) return true;
  const auto now = Clock::now();
  const auto limit = e.phase == Phase::connecting ? options.connect_timeout : options.stall_timeout;
  if (now - e.last_activity > limit) {
    e.fail(TransportFailure::timeout, fmt::format("no progress for {} s", limit.count()));
    return true;
  }
  if (e.phase == Phase::connecting) {
    pollfd fd{e.connection.socket.get(), POLLOUT, 0};
    if (::poll(&fd, 1, 0) <= 0) return true;
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(e.connection.socket.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      e.fail(TransportFailure::connect, fmt::format("failed to connect to {}: {}", e.target.authority,
                                                    util::errno_text(error)));
      return true;
    }
    e.phase = e.connection.tls ? Phase::handshaking : Phase::sending;
    e.last_activity = now;
  }
  if (e.phase == Phase::handshaking) {
    auto* tls = e.connection.tls.get();
    if (const int done = SSL_connect(tls); done != 1) {
      switch (SSL_get_error(tls, done)) {
        case SSL_ERROR_WANT_READ: e.wants = POLLIN; return true;
        case SSL_ERROR_WANT_WRITE: e.wants = POLLOUT; return true;
        default: break;
      }
      if (const auto verified = SSL_get_verify_result(tls); verified != X509_V_OK) {
        e.fail(TransportFailure::tls_verify, fmt::format("SSL certificate problem: {}",
                                                         X509_verify_cert_error_string(verified)));
      } else {
        e.fail(TransportFailure::tls_handshake, fmt::format("TLS handshake with {} failed: {}", e.target.authority,
                                                            openssl_error("the connection closed")));
      }
      return true;
    }
    e.phase = Phase::sending;
    e.last_activity = now;
  }
  std::string error;
  std::size_t moved = 0;
  while (e.phase == Phase::sending) {
    if (e.sent == e.out.size()) {
      e.phase = Phase::receiving;
      e.wants = POLLIN;
      break;
    }
    const auto io = transfer(e, true, e.out.data() + e.sent, e.out.size() - e.sent, moved, error);
    if (io == Io::wait) return true;
    if (io != Io::moved) {
      if (e.reused) return false;
      e.fail(TransportFailure::connect, fmt::format("failed to send to {}: {}", e.target.authority,
                                                    error.empty() ? "the connection closed" : error));
      return true;
    }
    e.sent += moved;
    e.last_activity = now;
  }
  char buffer[65536];
  while (e.phase == Phase::receiving) {
    const auto io = transfer(e, false, buffer, sizeof buffer, moved, error);
    if (io == Io::wait) return true;
    if (io != Io::moved && e.reused && !e.received) return false;
    if (io == Io::error) {
      e.fail(TransportFailure::connect, fmt::format("failed to read from {}: {}", e.target.authority, error));
      return true;
    }
    e.received = e.received || moved > 0;
    e.last_activity = now;
    // A length of 0 tells the parser the connection closed (the end of a body read to EOF).
    const auto parsed = http_parser_execute(&e.parser, &settings(), buffer, moved);
    if (e.phase == Phase::finished) return true;  // a callback failed it
    if (e.complete) {
      e.phase = Phase::finished;
      return true;
    }
    if (io == Io::end) {
      e.fail(e.received ? TransportFailure::truncated : TransportFailure::connect,
             e.received ? "the connection closed before the whole response arrived"
                        : fmt::format("{} closed the connection without answering", e.target.authority));
      return true;
    }
    if (parsed != moved || HTTP_PARSER_ERRNO(&e.parser) != HPE_OK) {
      e.fail(TransportFailure::other,
             fmt::format("invalid HTTP response: {}", http_errno_description(HTTP_PARSER_ERRNO(&e.parser))));
      return true;
    }
  }
  return true;
}

}  // namespace

LocalHttp::LocalHttp(const TransportOptions& options, Elsewhere elsewhere)
    : m_options(options), m_elsewhere(std::move(elsewhere)) {}

LocalHttp::~LocalHttp() = default;

bool LocalHttp::takes(const Request& request) {
  if (request.file_body) return false;
  const auto target = parse_target(request.url);
  return target && is_loopback_host(target->host);
}

Result<void> LocalHttp::start(Exchange& e) {
  HWIMG_TRY_ASSIGN(e.connection.socket, open_socket(e.target));
  if (!e.target.tls) return {};
  if (!m_tls) {
    OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr);
    auto tls = std::make_unique<Tls>();
    tls->context.reset(SSL_CTX_new(TLS_client_method()));
    if (!tls->context) return fail("failed to set up TLS: {}", openssl_error("SSL_CTX_new failed"));
    auto* context = tls->context.get();
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    if (m_options.verify_tls) {
      SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
      // The hashed system directory is read certificate by certificate as a handshake needs one.
      const bool loaded = m_options.ca_file.empty()
                              ? SSL_CTX_load_verify_locations(context, nullptr, "/etc/ssl/certs") == 1
                              : SSL_CTX_load_verify_locations(context, m_options.ca_file.c_str(), nullptr) == 1;
      if (!loaded) {
        return fail("failed to load the CA certificates {}: {}", m_options.ca_file.string(),
                    openssl_error("unreadable"));
      }
    }
    m_tls = std::move(tls);
  }
  e.connection.tls.reset(SSL_new(m_tls->context.get()));
  auto* ssl = e.connection.tls.get();
  if (ssl == nullptr || SSL_set_fd(ssl, e.connection.socket.get()) != 1) {
    return fail("failed to set up TLS: {}", openssl_error("SSL_new failed"));
  }
  if (is_ip_address(e.target.host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), e.target.host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, e.target.host.c_str());
    SSL_set1_host(ssl, e.target.host.c_str());
  }
  if (const auto session = m_tls->sessions.find(e.target.origin); session != m_tls->sessions.end()) {
    SSL_set_session(ssl, session->second.get());  // a failed resumption falls back to a full handshake
  }
  return {};
}

// A TLS 1.3 session ticket comes after the handshake: a connection that has carried an answer holds
// a resumable session, if the server gives tickets at all. A copy: OpenSSL marks a connection's own
// session unresumable when the connection is freed without a TLS shutdown.
void LocalHttp::remember_session(const Exchange& e) {
  if (!m_tls || !e.connection.tls || m_tls->sessions.contains(e.target.origin)) return;
  const std::unique_ptr<SSL_SESSION, SslSessionFree> current(SSL_get1_session(e.connection.tls.get()));
  if (!current || SSL_SESSION_is_resumable(current.get()) != 1) return;
  std::unique_ptr<SSL_SESSION, SslSessionFree> copy(SSL_SESSION_dup(current.get()));
  if (copy) m_tls->sessions.emplace(e.target.origin, std::move(copy));
}

std::size_t LocalHttp::connections_in_use(const std::string& origin) const {
  return static_cast<std::size_t>(std::ranges::count_if(m_exchanges, [&](const auto& e) {
    return e->target.origin == origin && e->phase != Exchange::Phase::queued && e->phase != Exchange::Phase::finished;
  }));
}

// Gives `e` a kept-alive connection of its origin, else a new one while the origin has fewer than
// max_local_connections in use; else it stays queued.
void LocalHttp::connect(Exchange& e) {
  if (const auto idle = m_idle.find(e.target.origin); idle != m_idle.end()) {
    e.connection = std::move(*idle->second);
    m_idle.erase(idle);
    e.reused = true;
    e.phase = Exchange::Phase::sending;
    e.last_activity = Clock::now();
    return;
  }
  if (connections_in_use(e.target.origin) >= m_options.max_local_connections) {
    e.phase = Exchange::Phase::queued;
    return;
  }
  e.phase = Exchange::Phase::connecting;
  e.last_activity = Clock::now();
  if (auto started = start(e); !started) e.fail(TransportFailure::connect, started.error().message);
}

void LocalHttp::submit(Request request, Done done, int redirects) {
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
  e.phase = Exchange::Phase::queued;  // not one of the origin's connections in use until it has one
  connect(e);
}

void LocalHttp::poll_set(std::vector<pollfd>& fds) const {
  for (const auto& e : m_exchanges) {
    if (e->phase == Exchange::Phase::finished || !e->connection.socket.valid()) continue;
    fds.push_back({e->connection.socket.get(), e->wants, 0});
  }
}

std::size_t LocalHttp::step() {
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
  bool freed = false;
  for (auto it = m_exchanges.begin(); it != m_exchanges.end();) {
    if ((*it)->phase != Exchange::Phase::finished) {
      ++it;
      continue;
    }
    auto exchange = std::move(*it);
    it = m_exchanges.erase(it);
    freed = true;
    if (exchange->done) {
      finish(*exchange);
      ++finished;
    }
  }
  // Connections freed (or closed) above go to the exchanges waiting for one, in order; while none
  // was, the queue cannot move.
  if (freed) {
    for (auto& e : m_exchanges) {
      if (e->phase == Exchange::Phase::queued) connect(*e);
    }
  }
  return finished;
}

void LocalHttp::finish(Exchange& e) {
  if (e.response.ok() && e.complete) remember_session(e);
  if (e.response.ok() && e.complete && http_should_keep_alive(&e.parser) != 0 && e.connection.socket.valid()) {
    m_idle.emplace(e.target.origin, std::make_unique<Connection>(std::move(e.connection)));
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
  if (redirect && e.request.follow_redirects && e.redirects < max_followed_redirects) {
    auto next = e.request;
    next.url = resolve_url(e.request.url, *location);
    // Credentials never follow a redirect to another origin (scheme, host or port).
    if (!same_origin(e.request.url, next.url)) strip_authorization(next.headers);
    if (takes(next)) return submit(std::move(next), std::move(e.done), e.redirects + 1);
    return m_elsewhere(std::move(next), std::move(e.done), e.redirects + 1);
  }
  e.done(std::move(response));
}

}  // namespace hwimg::registry
