#include "hwimg/registry/detail/transfer.hpp"

#include <algorithm>
#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::registry {
namespace {

TransportFailure classify(CURLcode code) {
  switch (code) {
    case CURLE_OK: return TransportFailure::none;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT: return TransportFailure::unreachable;
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

std::size_t on_write(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  t.moved = std::chrono::steady_clock::now();
  if (!t.body_started) {
    t.body_started = true;
    curl().easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &t.response.status);
    t.streaming = t.request.on_response_start && t.request.on_response_start(t.response);
  }
  if (t.streaming) {
    switch (t.request.on_body_data(std::string_view(data, n))) {
      case BodyIntake::taken: return n;
      case BodyIntake::full:
        // libcurl keeps this piece and reads nothing more of the exchange until it is unpaused
        // (docs/compatibility.md#registry-api).
        t.paused = true;
        return CURL_WRITEFUNC_PAUSE;
      case BodyIntake::stop: break;
    }
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
  t.moved = std::chrono::steady_clock::now();
  const std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {
    t.response.headers.clear();  // a new response (after 100 Continue)
    return n;
  }
  const auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    t.response.headers.emplace_back(util::to_lower(util::trim(line.substr(0, colon))),
                                    std::string(util::trim(line.substr(colon + 1))));
  }
  return n;
}

// Reads the next piece of a body relayed through a pipe, which can only be read in order.
std::size_t read_pipe(Transfer& t, char* buffer, std::size_t capacity) {
  const auto& body = *t.request.file_body;
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, body.length - t.body_position));
  if (want == 0) return 0;
  auto got = ::read(body.pipe, buffer, want);
  while (got < 0 && errno == EINTR) got = ::read(body.pipe, buffer, want);
  if (got <= 0) {
    t.open_error = got == 0 ? std::string("the relayed blob ended early") : util::errno_text(errno);
    return CURL_READFUNC_ABORT;
  }
  return static_cast<std::size_t>(got);
}

std::size_t read_file(Transfer& t, char* buffer, std::size_t capacity) {
  const auto& body = *t.request.file_body;
  if (!t.file.valid()) {
    t.file = util::UniqueFd(::open(body.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!t.file.valid()) {
      t.open_error = fmt::format("failed to open {}: {}", body.path.string(), util::errno_text(errno));
      return CURL_READFUNC_ABORT;
    }
  }
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, body.length - t.body_position));
  if (want == 0) return 0;
  const auto got = ::pread(t.file.get(), buffer, want, static_cast<off_t>(body.offset + t.body_position));
  if (got <= 0) {
    t.open_error = fmt::format("failed to read {}: {}", body.path.string(),
                               got == 0 ? std::string("file is shorter than expected") : util::errno_text(errno));
    return CURL_READFUNC_ABORT;
  }
  return static_cast<std::size_t>(got);
}

std::size_t on_read(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t capacity = size * count;
  if (!t.request.file_body) {
    const std::size_t n = std::min(capacity, t.request.body.size() - t.memory_position);
    std::copy_n(t.request.body.data() + t.memory_position, n, buffer);
    t.memory_position += n;
    if (n != 0) t.moved = std::chrono::steady_clock::now();
    return n;
  }
  const auto n = t.request.file_body->pipe >= 0 ? read_pipe(t, buffer, capacity) : read_file(t, buffer, capacity);
  if (n == CURL_READFUNC_ABORT || n == 0) return n;
  t.moved = std::chrono::steady_clock::now();
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

// Every option set here exists in libcurl 7.66 and later, whose absence load_curl reports; a
// failure is kept and returned once, naming the option.
class Options {
public:
  explicit Options(CURL* easy) : m_easy(easy) {}
  template <typename T>
  void set(CURLoption option, T value) {
    if (const auto code = curl().easy_setopt(m_easy, option, value); code != CURLE_OK && m_failed == CURLE_OK) {
      m_failed = code;
      m_option = option;
    }
  }
  [[nodiscard]] Result<void> result() const {
    if (m_failed == CURLE_OK) return {};
    return fail("failed to configure an HTTP exchange: libcurl refused option {}: {}", static_cast<int>(m_option),
                curl().easy_strerror(m_failed));
  }

private:
  CURL* m_easy;
  CURLcode m_failed = CURLE_OK;
  CURLoption m_option{};
};

}  // namespace

Result<void> prepare_transfer(Transfer& t, const TransportOptions& o) {
  t.easy.reset(curl().easy_init());
  if (!t.easy) return fail("failed to start an HTTP exchange: curl_easy_init returned null");
  Options set(t.easy.get());
  set.set(CURLOPT_URL, t.request.url.c_str());
  set.set(CURLOPT_PROTOCOLS_STR, "http,https");
  set.set(CURLOPT_NOSIGNAL, 1L);
  set.set(CURLOPT_SHARE, curl().share);
  // Uploads get HTTP/1.1 connections of their own: on one multiplexed HTTP/2 connection the
  // server decrypts and flow-controls every upload on a single stream of TLS records.
  const bool bulk = t.request.channel == Channel::bulk;
  set.set(CURLOPT_HTTP_VERSION, static_cast<long>(bulk ? CURL_HTTP_VERSION_1_1 : CURL_HTTP_VERSION_2TLS));
  // Wait for a connection being opened that may turn out multiplexed rather than open another;
  // only where HTTP/2 can be negotiated (ALPN, so TLS).
  if (!bulk && t.request.url.starts_with("https://")) set.set(CURLOPT_PIPEWAIT, 1L);
  set.set(CURLOPT_CONNECTTIMEOUT, static_cast<long>(o.connect_timeout.count()));
  set.set(CURLOPT_LOW_SPEED_LIMIT, 1L);
  set.set(CURLOPT_LOW_SPEED_TIME, static_cast<long>(o.stall_timeout.count()));
  set.set(CURLOPT_SSL_VERIFYPEER, o.verify_tls ? 1L : 0L);
  set.set(CURLOPT_SSL_VERIFYHOST, o.verify_tls ? 2L : 0L);
  if (!o.ca_file.empty()) {
    set.set(CURLOPT_CAINFO, o.ca_file.c_str());
  } else if (const auto* directory = system_ca_directory()) {
    // The hashed directory instead of the bundle: OpenSSL then reads only the certificates a
    // handshake needs, where parsing the whole bundle cost every registry command ~10 ms.
    set.set(CURLOPT_CAINFO, static_cast<const char*>(nullptr));
    set.set(CURLOPT_CAPATH, directory);
  }
  set.set(CURLOPT_WRITEFUNCTION, on_write);
  set.set(CURLOPT_WRITEDATA, &t);
  set.set(CURLOPT_HEADERFUNCTION, on_header);
  set.set(CURLOPT_HEADERDATA, &t);
  set.set(CURLOPT_PRIVATE, &t);
  set.set(CURLOPT_ERRORBUFFER, t.curl_error.data());
  // Redirects are followed by the transport, not libcurl: one rule whatever libcurl's version
  // (before 7.83 it sent custom headers on to another port of the same host).
  const auto body_size = t.request.file_body ? t.request.file_body->length : t.request.body.size();
  switch (t.request.method) {
    case Method::get: break;
    case Method::head: set.set(CURLOPT_NOBODY, 1L); break;
    case Method::del: set.set(CURLOPT_CUSTOMREQUEST, "DELETE"); break;
    case Method::post:
    case Method::put:
    case Method::patch:
      set.set(CURLOPT_UPLOAD, 1L);
      set.set(CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body_size));
      set.set(CURLOPT_READFUNCTION, on_read);
      set.set(CURLOPT_READDATA, &t);
      set.set(CURLOPT_SEEKFUNCTION, on_seek);
      set.set(CURLOPT_SEEKDATA, &t);
      if (t.request.method != Method::put) set.set(CURLOPT_CUSTOMREQUEST, method_name(t.request.method).data());
      break;
  }
  // "Expect: 100-continue" would cost a round trip per upload on HTTP/1.1.
  t.header_list.reset(curl().slist_append(nullptr, "Expect:"));
  bool listed = t.header_list != nullptr;
  for (const auto& h : t.request.headers) listed = listed && curl().slist_append(t.header_list.get(), h.c_str());
  if (!listed) return fail("failed to start an HTTP exchange: out of memory for its headers");
  set.set(CURLOPT_HTTPHEADER, t.header_list.get());
  return set.result();
}

namespace {

// What went wrong, in the words a user can act on: the address and the system's reason for a
// refused connection, libcurl's detailed text (certificate problems, resolver errors) otherwise.
std::string failure_text(const Transfer& t, CURLcode code) {
  const auto authority = url_authority(t.request.url);
  switch (code) {
    case CURLE_COULDNT_CONNECT: {
      long os_errno = 0;
      if (curl().easy_getinfo(t.easy.get(), CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK && os_errno != 0) {
        return fmt::format("failed to connect to {}: {}", authority, util::errno_text(static_cast<int>(os_errno)));
      }
      break;
    }
    case CURLE_GOT_NOTHING: return fmt::format("{} closed the connection without answering", authority);
    case CURLE_PARTIAL_FILE: return "the connection closed before the whole response arrived";
    default: break;
  }
  if (t.curl_error[0] != '\0') return t.curl_error.data();
  return curl().easy_strerror(code);
}

}  // namespace

void complete_transfer(Transfer& t, CURLcode code) {
  auto& r = t.response;
  curl().easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &r.status);
  char* effective = nullptr;
  if (curl().easy_getinfo(t.easy.get(), CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective) {
    r.url = effective;
  }
  r.failure = classify(code);
  if (code == CURLE_ABORTED_BY_CALLBACK || (code != CURLE_OK && !t.open_error.empty())) {
    r.failure = TransportFailure::other;
    r.error = t.open_error;
  } else if (r.failure == TransportFailure::too_large) {
    r.error = too_large_error(r.status, t.request.max_response_body);
  } else if (r.failure != TransportFailure::none) {
    r.error = failure_text(t, code);
  }
}

}  // namespace hwimg::registry
