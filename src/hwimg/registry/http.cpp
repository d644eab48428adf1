#include "hwimg/registry/detail/http.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <list>
#include <map>
#include <mutex>

#include <fcntl.h>
#include <unistd.h>

#include "hwimg/registry/detail/curl_library.hpp"
#include "hwimg/registry/detail/local_http.hpp"
#include "hwimg/util/fd.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::registry {
namespace {

using Clock = std::chrono::steady_clock;

struct EasyDeleter {
  void operator()(CURL* easy) const { curl().easy_cleanup(easy); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

struct MultiDeleter {
  void operator()(CURLM* multi) const { curl().multi_cleanup(multi); }
};
using MultiHandle = std::unique_ptr<CURLM, MultiDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl().slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

TransportFailure classify(CURLcode code) {
  switch (code) {
    case CURLE_OK: return TransportFailure::none;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY: return TransportFailure::connect;
    case CURLE_SSL_CONNECT_ERROR: return TransportFailure::tls_handshake;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE: return TransportFailure::tls_verify;
    case CURLE_OPERATION_TIMEDOUT: return TransportFailure::timeout;
    case CURLE_PARTIAL_FILE: return TransportFailure::truncated;
    case CURLE_WRITE_ERROR: return TransportFailure::too_large;
    default: return TransportFailure::other;
  }
}

}  // namespace

std::string_view method_name(Method method) {
  switch (method) {
    case Method::get: return "GET";
    case Method::head: return "HEAD";
    case Method::post: return "POST";
    case Method::put: return "PUT";
    case Method::patch: return "PATCH";
    case Method::del: return "DELETE";
  }
  return "GET";
}

std::optional<std::string> Response::header(std::string_view name) const {
  const auto lower = util::to_lower(name);
  for (const auto& [key, value] : headers) {
    if (key == lower) return value;
  }
  return std::nullopt;
}

std::vector<std::string> Response::header_values(std::string_view name) const {
  const auto lower = util::to_lower(name);
  std::vector<std::string> out;
  for (const auto& [key, value] : headers) {
    if (key == lower) out.push_back(value);
  }
  return out;
}

std::string next_page_link(const Response& r) {
  for (const auto& value : r.header_values("link")) {
    for (const auto& link : util::split(value, ',')) {
      const auto open = link.find('<');
      const auto close = link.find('>');
      if (open == std::string::npos || close == std::string::npos || close < open) continue;
      if (link.find("rel=\"next\"", close) != std::string::npos || link.find("rel=next", close) != std::string::npos) {
        return link.substr(open + 1, close - open - 1);
      }
    }
  }
  return {};
}

// One exchange in flight: the easy handle and everything its callbacks write into.
struct Transfer {
  EasyHandle easy;
  Slist header_list;
  Request request;
  std::function<void(Response)> done;
  Response response;
  util::UniqueFd file;
  std::uint64_t body_position = 0;
  std::size_t memory_position = 0;
  std::string open_error;
  Clock::time_point started;
  int redirects = 0;  // followed before this exchange
  bool body_started = false;
  bool streaming = false;  // the body goes to request.on_body_data
};

struct Transport::State {
  TransportOptions options;
  MultiHandle multi;  // created with the first exchange libcurl carries
  std::list<Transfer> transfers;
  std::unique_ptr<LocalHttp> local;
  std::multimap<Clock::time_point, std::function<void()>> timers;
  std::uint64_t exchanges = 0;

  void submit_curl(Request request, std::function<void(Response)> done, int redirects = 0);
  // Follows a redirect of a finished libcurl exchange; false when it is not one to follow.
  bool follow_redirect(Transfer& t);
  // Runs libcurl's transfers as far as they go; calls `done` of the finished ones.
  Result<std::size_t> step_curl();
  // Waits up to `wait_ms` for a socket of either engine, or sleeps when none has one.
  Result<void> wait(int wait_ms);

  Result<void> start_curl() {
    if (multi) return {};
    HWIMG_TRY(load_curl());
    multi.reset(curl().multi_init());
    if (!multi) return fail("failed to initialise libcurl: curl_multi_init returned null");
    curl().multi_setopt(multi.get(), CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl().multi_setopt(multi.get(), CURLMOPT_MAX_HOST_CONNECTIONS, options.max_host_connections);
    return {};
  }
};

namespace {

std::size_t on_write(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  if (!t.body_started) {
    t.body_started = true;
    curl().easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &t.response.status);
    t.streaming = t.request.on_response_start && t.request.on_response_start(t.response);
  }
  if (t.streaming) {
    if (t.request.on_body_data(std::string_view(data, n))) return n;
    t.open_error = "the reader stopped reading";
    return 0;
  }
  if (t.response.body.size() + n > t.request.max_response_body) {
    return 0;  // aborts with CURLE_WRITE_ERROR, reported as too_large
  }
  t.response.body.append(data, n);
  return n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  const std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {
    t.response.headers.clear();  // a new response (after 100 Continue or a redirect)
    return n;
  }
  const auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    t.response.headers.emplace_back(util::to_lower(util::trim(line.substr(0, colon))),
                                    std::string(util::trim(line.substr(colon + 1))));
  }
  return n;
}

std::size_t on_read(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t capacity = size * count;
  if (!t.request.file_body) {
    const std::size_t n = std::min(capacity, t.request.body.size() - t.memory_position);
    std::copy_n(t.request.body.data() + t.memory_position, n, buffer);
    t.memory_position += n;
    return n;
  }
  const auto& body = *t.request.file_body;
  if (body.pipe >= 0) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, body.length - t.body_position));
    if (want == 0) return 0;
    auto got = ::read(body.pipe, buffer, want);
    while (got < 0 && errno == EINTR) got = ::read(body.pipe, buffer, want);
    if (got <= 0) {
      t.open_error = got == 0 ? std::string("the relayed blob ended early") : util::errno_text(errno);
      return CURL_READFUNC_ABORT;
    }
    const auto n = static_cast<std::size_t>(got);
    if (t.request.on_body_read) t.request.on_body_read(t.body_position, std::string_view(buffer, n));
    t.body_position += n;
    return n;
  }
  if (!t.file.valid()) {
    t.file = util::UniqueFd(::open(body.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!t.file.valid()) {
      t.open_error = fmt::format("failed to open {}: {}", body.path.string(), util::errno_text(errno));
      return CURL_READFUNC_ABORT;
    }
  }
  const auto left = body.length - t.body_position;
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, left));
  if (want == 0) return 0;
  const auto got = ::pread(t.file.get(), buffer, want, static_cast<off_t>(body.offset + t.body_position));
  if (got <= 0) {
    t.open_error = fmt::format("failed to read {}: {}", body.path.string(),
                               got == 0 ? std::string("file is shorter than expected") : util::errno_text(errno));
    return CURL_READFUNC_ABORT;
  }
  const auto n = static_cast<std::size_t>(got);
  if (t.request.on_body_read) t.request.on_body_read(t.body_position, std::string_view(buffer, n));
  t.body_position += n;
  return n;
}

int on_seek(void* user, curl_off_t offset, int origin) {
  auto& t = *static_cast<Transfer*>(user);
  if (origin != SEEK_SET || offset < 0) return CURL_SEEKFUNC_CANTSEEK;
  if (t.request.file_body) {
    if (t.request.file_body->pipe >= 0 && static_cast<std::uint64_t>(offset) != t.body_position) {
      return CURL_SEEKFUNC_CANTSEEK;
    }
    t.body_position = static_cast<std::uint64_t>(offset);
  } else {
    t.memory_position = static_cast<std::size_t>(offset);
  }
  return CURL_SEEKFUNC_OK;
}

// The system's hashed certificate directory (c_rehash links, as Debian's ca-certificates makes).
const char* system_ca_directory() {
  static const bool present = ::access("/etc/ssl/certs", R_OK | X_OK) == 0;
  return present ? "/etc/ssl/certs" : nullptr;
}

template <typename T>
void set(CURL* easy, CURLoption option, T value) {
  // Options set here are all supported by libcurl 7.88; a failure means a programming error.
  [[maybe_unused]] const CURLcode code = curl().easy_setopt(easy, option, value);
}

}  // namespace

Transport::Transport(std::unique_ptr<State> state) : m_state(std::move(state)) {}
Transport::Transport(Transport&&) noexcept = default;
Transport& Transport::operator=(Transport&&) noexcept = default;
Transport::~Transport() {
  if (m_state && m_state->multi) {
    for (auto& t : m_state->transfers) curl().multi_remove_handle(m_state->multi.get(), t.easy.get());
  }
}

Result<Transport> Transport::create(TransportOptions options) {
  auto state = std::make_unique<State>();
  state->options = std::move(options);
  state->local = std::make_unique<LocalHttp>(state->options, [raw = state.get()](Request request, LocalHttp::Done done,
                                                                                  int redirects) {
    raw->timers.emplace(Clock::now(), [raw, request = std::move(request), done = std::move(done), redirects]() mutable {
      raw->submit_curl(std::move(request), std::move(done), redirects);
    });
  });
  return Transport(std::move(state));
}

std::uint64_t Transport::exchanges() const { return m_state->exchanges; }

void Transport::State::submit_curl(Request request, std::function<void(Response)> done, int redirects) {
  if (auto started = start_curl(); !started) {
    // Answered like a transport failure, on the next turn of the loop, as every exchange is.
    Response response;
    response.failure = TransportFailure::other;
    response.error = started.error().message;
    response.url = request.url;
    timers.emplace(Clock::now(), [done = std::move(done), response = std::move(response)]() mutable { done(std::move(response)); });
    return;
  }
  auto& t = transfers.emplace_back();
  t.request = std::move(request);
  t.done = std::move(done);
  t.redirects = redirects;
  t.started = Clock::now();
  t.response.url = t.request.url;
  t.easy.reset(curl().easy_init());
  CURL* e = t.easy.get();
  const auto& o = options;
  set(e, CURLOPT_URL, t.request.url.c_str());
  set(e, CURLOPT_PROTOCOLS_STR, "http,https");
  set(e, CURLOPT_NOSIGNAL, 1L);
  const bool bulk = t.request.channel == Channel::bulk;
  set(e, CURLOPT_HTTP_VERSION, static_cast<long>(bulk ? CURL_HTTP_VERSION_1_1 : CURL_HTTP_VERSION_2TLS));
  set(e, CURLOPT_PIPEWAIT, 1L);
  set(e, CURLOPT_CONNECTTIMEOUT, static_cast<long>(o.connect_timeout.count()));
  set(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  set(e, CURLOPT_LOW_SPEED_TIME, static_cast<long>(o.stall_timeout.count()));
  set(e, CURLOPT_SSL_VERIFYPEER, o.verify_tls ? 1L : 0L);
  set(e, CURLOPT_SSL_VERIFYHOST, o.verify_tls ? 2L : 0L);
  if (!o.ca_file.empty()) {
    set(e, CURLOPT_CAINFO, o.ca_file.c_str());
  } else if (const auto* directory = system_ca_directory()) {
    // The hashed directory instead of the bundle: OpenSSL then reads only the certificates a
    // handshake needs, where parsing the whole bundle cost every registry command ~10 ms.
    set(e, CURLOPT_CAINFO, static_cast<const char*>(nullptr));
    set(e, CURLOPT_CAPATH, directory);
  }
  set(e, CURLOPT_WRITEFUNCTION, on_write);
  set(e, CURLOPT_WRITEDATA, &t);
  set(e, CURLOPT_HEADERFUNCTION, on_header);
  set(e, CURLOPT_HEADERDATA, &t);
  set(e, CURLOPT_PRIVATE, &t);
  // Redirects are followed by follow_redirect, not libcurl: one policy for both engines, whatever
  // libcurl's version (before 7.83 it sent custom headers on to another port of the same host).
  const auto body_size = t.request.file_body ? t.request.file_body->length : t.request.body.size();
  switch (t.request.method) {
    case Method::get: break;
    case Method::head: set(e, CURLOPT_NOBODY, 1L); break;
    case Method::del: set(e, CURLOPT_CUSTOMREQUEST, "DELETE"); break;
    case Method::post:
    case Method::put:
    case Method::patch:
      set(e, CURLOPT_UPLOAD, 1L);
      set(e, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body_size));
      set(e, CURLOPT_READFUNCTION, on_read);
      set(e, CURLOPT_READDATA, &t);
      set(e, CURLOPT_SEEKFUNCTION, on_seek);
      set(e, CURLOPT_SEEKDATA, &t);
      if (t.request.method != Method::put) set(e, CURLOPT_CUSTOMREQUEST, std::string(method_name(t.request.method)).c_str());
      break;
  }
  curl_slist* list = nullptr;
  // "Expect: 100-continue" would cost a round trip per upload on HTTP/1.1.
  list = curl().slist_append(list, "Expect:");
  for (const auto& h : t.request.headers) list = curl().slist_append(list, h.c_str());
  t.header_list.reset(list);
  set(e, CURLOPT_HTTPHEADER, list);
  ++exchanges;
  curl().multi_add_handle(multi.get(), e);
}

void Transport::submit(Request request, std::function<void(Response)> done) {
  if (LocalHttp::takes(request)) {
    ++m_state->exchanges;
    return m_state->local->submit(std::move(request), std::move(done));
  }
  m_state->submit_curl(std::move(request), std::move(done));
}

void Transport::after(std::chrono::milliseconds delay, std::function<void()> action) {
  m_state->timers.emplace(Clock::now() + delay, std::move(action));
}

Result<std::size_t> Transport::State::step_curl() {
  int running = 0;
  if (const auto code = curl().multi_perform(multi.get(), &running); code != CURLM_OK) {
    return fail("failed to run HTTP transfers: {}", curl().multi_strerror(code));
  }
  std::vector<std::pair<Transfer*, CURLcode>> finished;
  int queued = 0;
  while (CURLMsg* message = curl().multi_info_read(multi.get(), &queued)) {
    if (message->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    curl().easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &t);
    finished.emplace_back(t, message->data.result);
  }
  for (auto [t, code] : finished) {
    curl().multi_remove_handle(multi.get(), t->easy.get());
    auto& r = t->response;
    curl().easy_getinfo(t->easy.get(), CURLINFO_RESPONSE_CODE, &r.status);
    char* effective = nullptr;
    if (curl().easy_getinfo(t->easy.get(), CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective) {
      r.url = effective;
    }
    r.failure = classify(code);
    if (code == CURLE_ABORTED_BY_CALLBACK || (code != CURLE_OK && !t->open_error.empty())) {
      r.failure = TransportFailure::other;
      r.error = t->open_error;
    } else if (r.failure == TransportFailure::too_large) {
      r.error = too_large_error(r.status, t->request.max_response_body);
    } else if (r.failure != TransportFailure::none) {
      r.error = curl().easy_strerror(code);
    }
    if (options.output->logging()) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t->started).count();
      options.output->log(fmt::format("{} {} -> {} ({} ms)", method_name(t->request.method),
                                      redact_url(t->request.url), r.ok() ? std::to_string(r.status) : r.error, ms));
    }
    if (follow_redirect(*t)) {
      transfers.remove_if([t](const Transfer& x) { return &x == t; });
      continue;
    }
    auto done = std::move(t->done);
    auto response = std::move(t->response);
    transfers.remove_if([t](const Transfer& x) { return &x == t; });
    done(std::move(response));
  }
  return finished.size();
}

bool Transport::State::follow_redirect(Transfer& t) {
  const auto& r = t.response;
  const auto location = r.header("location");
  const bool readable = t.request.method == Method::get || t.request.method == Method::head;
  if (!t.request.follow_redirects || !readable || !r.ok() || r.status < 300 || r.status > 399 || !location ||
      t.redirects >= max_followed_redirects) {
    return false;
  }
  auto next = t.request;
  next.url = resolve_url(t.request.url, *location);
  if (!same_origin(t.request.url, next.url)) strip_authorization(next.headers);
  if (LocalHttp::takes(next)) {
    local->submit(std::move(next), std::move(t.done), t.redirects + 1);
  } else {
    submit_curl(std::move(next), std::move(t.done), t.redirects + 1);
  }
  return true;
}

Result<void> Transport::State::wait(int wait_ms) {
  std::vector<pollfd> local_fds;
  local->poll_set(local_fds);
  if (!transfers.empty()) {
    std::vector<curl_waitfd> extra;
    for (const auto& fd : local_fds) extra.push_back({fd.fd, fd.events, 0});
    if (const auto code = curl().multi_poll(multi.get(), extra.data(), static_cast<unsigned>(extra.size()), wait_ms,
                                            nullptr);
        code != CURLM_OK) {
      return fail("failed to wait for HTTP transfers: {}", curl().multi_strerror(code));
    }
    return {};
  }
  if (!local_fds.empty()) {
    ::poll(local_fds.data(), local_fds.size(), wait_ms);
    return {};
  }
  ::usleep(static_cast<useconds_t>(wait_ms) * 1000);
  return {};
}

Result<void> Transport::run() {
  return run_until([] { return false; });
}

Result<void> Transport::run_until(const std::function<bool()>& stop) {
  auto& s = *m_state;
  while ((!s.transfers.empty() || s.local->busy() || !s.timers.empty()) && !stop()) {
    std::size_t finished = s.local->step();
    if (!s.transfers.empty()) {
      HWIMG_TRY_ASSIGN(const auto done, s.step_curl());
      finished += done;
    }
    const auto now = Clock::now();
    while (!s.timers.empty() && s.timers.begin()->first <= now) {
      auto action = std::move(s.timers.begin()->second);
      s.timers.erase(s.timers.begin());
      action();
    }
    if (finished != 0 || stop()) continue;
    int wait_ms = 1000;
    if (!s.timers.empty()) {
      const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(s.timers.begin()->first - now).count();
      wait_ms = static_cast<int>(std::clamp<long long>(until, 0, 1000));
    }
    HWIMG_TRY(s.wait(wait_ms));
  }
  return {};
}

std::string too_large_error(long status, std::size_t limit) {
  if (status >= 200 && status <= 299) return fmt::format("answer larger than {} bytes", limit);
  return fmt::format("HTTP {} with an answer larger than {} bytes", status, limit);
}

std::string url_origin(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {};
  const auto authority_end = url.find_first_of("/?#", scheme_end + 3);
  auto authority = util::to_lower(url.substr(scheme_end + 3, authority_end - scheme_end - 3));
  if (const auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  const auto scheme = util::to_lower(url.substr(0, scheme_end));
  // The default port is the same origin written either way.
  const auto default_port = scheme == "https" ? ":443" : scheme == "http" ? ":80" : "";
  if (!std::string_view(default_port).empty() && authority.ends_with(default_port)) {
    authority.resize(authority.size() - std::string_view(default_port).size());
  }
  return scheme + "://" + authority;
}

bool same_origin(std::string_view a, std::string_view b) {
  const auto origin = url_origin(a);
  return !origin.empty() && origin == url_origin(b);
}

void strip_authorization(std::vector<std::string>& headers) {
  std::erase_if(headers, [](const std::string& h) { return util::to_lower(h).starts_with("authorization:"); });
}

std::string redact_url(std::string_view url) {
  const auto query = url.find('?');
  if (query == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, query + 1));
  bool first = true;
  for (const auto& pair : util::split(url.substr(query + 1), '&')) {
    if (!first) out += '&';
    first = false;
    const auto eq = pair.find('=');
    const auto key = pair.substr(0, eq);
    const bool secret = key == "_state" || key.find("token") != std::string::npos || key == "password" ||
                        key.find("signature") != std::string::npos || key.find("Signature") != std::string::npos;
    out += secret && eq != std::string::npos ? key + "=REDACTED" : pair;
  }
  return out;
}

std::string resolve_url(std::string_view base, std::string_view reference) {
  if (reference.starts_with("http://") || reference.starts_with("https://")) return std::string(reference);
  const auto scheme_end = base.find("://");
  const auto authority_end = base.find('/', scheme_end == std::string_view::npos ? 0 : scheme_end + 3);
  const auto origin = base.substr(0, authority_end);
  if (reference.starts_with("//")) return std::string(base.substr(0, scheme_end + 1)) + std::string(reference);
  if (reference.starts_with('/')) return std::string(origin) + std::string(reference);
  auto path = authority_end == std::string_view::npos ? std::string_view("/") : base.substr(authority_end);
  path = path.substr(0, path.find('?'));
  return std::string(origin) + std::string(path.substr(0, path.rfind('/') + 1)) + std::string(reference);
}

std::string url_encode(std::string_view value) {
  std::string out;
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

}  // namespace hwimg::registry
