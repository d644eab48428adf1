// `hwimg serve` end to end (issue 23): raw requests from the fuzzer go over loopback sockets into
// serve's own HTTP server (libmicrohttpd, the event loop, fetch workers, streamed bodies) and its
// mirror (routing, tag judgment, pass-through), whose one upstream is a registry on this machine
// answering with the fuzzer's scripted answers, through the real registry client.
//
// Input: sections separated by a line "===". The first holds the node's connections, separated
// by a line "---", each sent as it is (several requests on one are pipelined), then half-closed;
// the others are the upstream's answers in order, as in fuzz/corpus/registry_client (the seeds in
// fuzz/corpus/serve show the shape). REALM anywhere is replaced by the upstream's address; the
// upstream is also reachable by the alias "up" (`/v2/up/team/app/...` or `?ns=up`).
//
// What serve must hold whatever comes: no exception reaches its barriers; every request with a
// whole head is answered; the connection is closed after the client's half-close; a whole body of
// a by-digest GET hashes to that digest; a Docker-Content-Digest sent with a manifest names what
// was sent; no fetch (nor the streamed body it reads) outlives its client.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hostile_server.hpp"
#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/oci/digest.hpp"
#include "hwimg/serve/http_server.hpp"
#include "hwimg/serve/mirror.hpp"
#include "hwimg/util/fd.hpp"
#include "hwimg/util/strings.hpp"

namespace {

using namespace hwimg;
using Clock = std::chrono::steady_clock;

[[noreturn]] void finding(std::string_view what) {
  std::fprintf(stderr, "fuzz_serve: %.*s\n", static_cast<int>(what.size()), what.data());
  __builtin_trap();
}

void require(bool condition, std::string_view what) {
  if (!condition) finding(what);
}

// serve's exception barriers log and answer 500: here an exception that reaches one is a finding.
class BarrierWatch final : public util::Output {
public:
  void progress(std::string_view) override {}
  void status(std::string_view) override {}
  void clear_status() override {}
  void notice(std::string_view) override {}
  void log(std::string_view) override {}
  [[nodiscard]] bool logging() const override { return false; }
  void warning(std::string_view line) override {
    // By their fixed beginnings: the mirror's own warnings quote upstream bytes, which may say anything.
    if (line.starts_with("failed to answer ") || line.starts_with("a request failed with an unexpected error") ||
        line.starts_with("refusing a request failed") || line.starts_with("failed to close overdue")) {
      finding(line);
    }
  }
};

// amd64 at x86-64-v3 with one H100 (compute capability 9.0) on a CUDA 12.4 driver.
probe::HostFacts node_facts() {
  probe::HostFacts facts;
  facts.cpu.arch = hw::CpuArch::amd64;
  facts.cpu.vendor = "AMD";
  for (const auto& feature : hw::x86_level_features(hw::parse_x86_level("x86-64-v3").value())) {
    facts.cpu.features.push_back(feature);
  }
  probe::derive_cpu_facts(facts.cpu);
  probe::NvidiaFacts nvidia;
  nvidia.driver_version = "550.54.15";
  nvidia.cuda_driver_version = "12.4";
  nvidia.source = "nvml";
  probe::GpuFacts gpu;
  gpu.uuid = "GPU-00000000";
  gpu.name = "NVIDIA H100";
  gpu.compute_capability = "9.0";
  gpu.brand = "NVIDIA";
  nvidia.gpus.push_back(gpu);
  facts.nvidia = std::move(nvidia);
  return facts;
}

// The server for the whole run; each input gets a mirror of its own (no tag kept, no client
// pooled from the last), which the server's handlers reach through `mirror`.
struct Node {
  fuzz::HostileServer upstream;
  BarrierWatch watch;
  serve::HostState host{[] { return Result<probe::HostFacts>(node_facts()); }};
  std::atomic<serve::Mirror*> mirror{nullptr};
  std::unique_ptr<serve::HttpServer> server;

  Node() {
    require(host.refresh().has_value(), "the host facts do not load");
    load_libraries_here();
    serve::ServerSettings settings;
    settings.port = 0;
    settings.header_timeout = std::chrono::milliseconds(100);
    settings.idle_timeout = std::chrono::milliseconds(1000);
    settings.fetch_limit = 4;
    settings.event_threads = 2;
    settings.output = &watch;
    serve::Handlers handlers{
        [this](const serve::HttpRequest& request) { return mirror.load()->answer_now(request); },
        [this](const serve::HttpRequest& request) { return mirror.load()->answer_from_upstream(request); },
        [this](unsigned status, std::string_view message) { return mirror.load()->failure(status, message); }};
    auto started = serve::HttpServer::start(settings, std::move(handlers));
    require(started.has_value(), "serve's server does not start");
    server = std::move(*started);
  }

  // libcurl, and OpenSSL under it, loaded by this thread: on a fetch worker (as in serve), what
  // OpenSSL keeps for the thread that started it shows as a leak.
  void load_libraries_here() {
    registry::ClientOptions options;
    options.plain_http = true;
    auto client = registry::Client::create(options);
    require(client.has_value(), "no registry client");
    const auto repository = registry::parse_reference(upstream.address() + "/warm/up").value();
    static_cast<void>(client->head_blob(repository, oci::Digest::sha256_of("")));
  }

  // Nothing left of the last input that reaches its mirror: every connection was closed by serve
  // (the exchanges read to the end), so no handler runs for it again; its fetches ended, and with
  // them its streamed bodies. (Connections are not counted: libmicrohttpd frees one it closed
  // after a suspension at its next wake-up, up to the idle timeout later.)
  void wait_until_quiet() const {
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (true) {
      const auto load = server->load();
      if (load.fetches_running == 0 && load.fetches_waiting == 0) return;
      require(Clock::now() < deadline, "a fetch outlived its client by 5 s");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
};

struct SentRequest {
  std::string method;
  std::string target;
  bool whole = false;  // a head in the shape every client sends, so it must be answered
};

std::vector<std::string_view> lines_of(std::string_view head) {
  std::vector<std::string_view> out;
  while (true) {
    const auto end = head.find("\r\n");
    out.push_back(head.substr(0, end));
    if (end == std::string_view::npos) return out;
    head.remove_prefix(end + 2);
  }
}

bool is_token(std::string_view text) {
  return !text.empty() && text.find_first_not_of("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm"
                                                 "nopqrstuvwxyz") == std::string_view::npos;
}

bool is_printable(std::string_view text) {
  for (const char c : text) {
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return true;
}

// "GET /v2/ HTTP/1.1": method, target, version, each one word.
std::optional<SentRequest> request_line(std::string_view line) {
  const auto first = line.find(' ');
  const auto second = line.find(' ', first == std::string_view::npos ? first : first + 1);
  if (second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos) return std::nullopt;
  SentRequest request;
  request.method = line.substr(0, first);
  request.target = line.substr(first + 1, second - first - 1);
  const auto version = line.substr(second + 1);
  request.whole = (request.method == "GET" || request.method == "HEAD") && request.target.starts_with('/') &&
                  request.target.find_first_of("%#\t") == std::string::npos && is_printable(request.target) &&
                  (version == "HTTP/1.1" || version == "HTTP/1.0");
  return request;
}

struct Connection {
  std::vector<SentRequest> requests;  // the last may not be whole
  bool tail = false;                  // bytes after the whole requests
};

// The requests on a connection as serve should read them, up to the first it may refuse to read
// (a body, an odd head), which is the last.
Connection requests_in(std::string_view bytes) {
  Connection out;
  while (!bytes.empty()) {
    out.tail = true;
    const auto end = bytes.find("\r\n\r\n");
    if (end == std::string_view::npos) return out;
    const auto head = bytes.substr(0, end);
    const auto lines = lines_of(head);
    auto request = request_line(lines.front());
    if (!request) return out;
    request->whole = request->whole && end < 4096;
    bool host = false;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      const auto colon = lines[i].find(':');
      const auto name = util::to_lower(lines[i].substr(0, colon));
      if (colon == std::string_view::npos || !is_token(name) || !is_printable(lines[i]) || name == "content-length" ||
          name == "transfer-encoding" || name == "expect" || name == "connection") {
        request->whole = false;
      }
      host = host || name == "host";
    }
    request->whole = request->whole && host;
    out.requests.push_back(std::move(*request));
    if (!out.requests.back().whole) return out;
    bytes.remove_prefix(end + 4);
    out.tail = false;
  }
  return out;
}

struct Answer {
  unsigned status = 0;
  serve::Fields headers;
  std::string body;
  bool whole = false;  // the body's end is known and came
};

std::optional<std::string> field(const Answer& answer, std::string_view name) {
  return util::field_value(answer.headers, name);
}

std::uint64_t number(std::string_view text, int base, std::string_view what) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  require(error == std::errc() && end == text.data() + text.size(), what);
  return value;
}

// The next answer in `bytes` (consumed), nullopt when its head did not come whole.
std::optional<Answer> next_answer(std::string_view& bytes, std::string_view method) {
  const auto end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) return std::nullopt;
  const auto lines = lines_of(bytes.substr(0, end));
  bytes.remove_prefix(end + 4);
  Answer answer;
  const auto status_line = lines.front();
  require(status_line.size() >= 12 && status_line.starts_with("HTTP/1.") && status_line[8] == ' ',
          "serve sent a status line that is no HTTP/1.x status line");
  answer.status = static_cast<unsigned>(number(status_line.substr(9, 3), 10, "serve sent a status that is no number"));
  require(answer.status >= 100 && answer.status < 600, "serve sent a status outside 100-599");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto colon = lines[i].find(':');
    require(colon != std::string_view::npos, "serve sent a header line without a colon");
    answer.headers.emplace_back(util::to_lower(lines[i].substr(0, colon)), util::trim(lines[i].substr(colon + 1)));
  }
  if (method == "HEAD" || answer.status < 200 || answer.status == 204 || answer.status == 304) {
    answer.whole = true;
    return answer;
  }
  if (field(answer, "transfer-encoding") == "chunked") {
    while (true) {
      const auto line_end = bytes.find("\r\n");
      if (line_end == std::string_view::npos) return answer;
      const auto size = number(bytes.substr(0, line_end), 16, "serve sent a chunk size that is no number");
      if (size > bytes.size() || bytes.size() - line_end - 2 < size + 2) return answer;
      answer.body += bytes.substr(line_end + 2, size);
      bytes.remove_prefix(line_end + 2 + size + 2);
      if (size == 0) break;
    }
    answer.whole = true;
  } else if (const auto length = field(answer, "content-length")) {
    const auto size = number(*length, 10, "serve sent a Content-Length that is no number");
    answer.whole = bytes.size() >= size;
    answer.body = bytes.substr(0, size);
    bytes.remove_prefix(answer.body.size());
  } else {
    answer.body = bytes;  // until the connection closed: a cut is not told from the end
    bytes = {};
  }
  return answer;
}

// The answers in `received`, in the order of `requests`, as far as they came.
std::vector<Answer> answers_in(std::string_view received, const std::vector<SentRequest>& requests) {
  std::vector<Answer> out;
  while (out.size() < requests.size()) {
    auto answer = next_answer(received, requests[out.size()].method);
    if (!answer) break;
    if (answer->status >= 200) out.push_back(std::move(*answer));  // a 100 Continue comes before the answer
  }
  return out;
}

// The request's route as serve reads it (the path before '?', its ns value), so that a tag list
// under a ".../manifests/..." name is not taken for a manifest.
std::optional<serve::Route> route_of(std::string_view target, const std::vector<std::string>& upstreams) {
  const auto question = target.find('?');
  std::optional<std::string> ns;
  for (auto query = question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
       !query.empty();) {
    const auto pair = query.substr(0, query.find('&'));
    if (pair.starts_with("ns=")) ns = std::string(pair.substr(3));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
  }
  auto route = serve::parse_route(target.substr(0, question), ns, upstreams);
  if (!route) return std::nullopt;
  return std::move(*route);
}

void check(const SentRequest& request, const Answer& answer, const std::vector<std::string>& upstreams) {
  if (answer.status < 200 || answer.status > 299) return;
  const auto route = route_of(request.target, upstreams);
  if (!route) return;
  const bool manifest = route->kind == serve::RouteKind::manifest;
  std::optional<oci::Digest> asked;
  if ((manifest && route->by_digest()) || route->kind == serve::RouteKind::blob) {
    asked = oci::Digest::parse(route->reference).value();
  }
  const auto sent_digest = field(answer, "docker-content-digest");
  if (asked && sent_digest) require(*sent_digest == asked->str(), "serve named another digest than the one asked");
  if (request.method != "GET" || !answer.whole || answer.status == 206) return;
  const auto digest = oci::Digest::sha256_of(answer.body);
  if (asked) require(digest == *asked, "serve sent a whole body that is not the digest asked");
  if (manifest && sent_digest) require(digest.str() == *sent_digest, "serve sent a manifest that is not its digest");
}

}  // namespace

// Sends `request` (reading meanwhile, so that pipelined answers never block the sending),
// half-closes once `answered` says so of what came (and how long ago the last byte went), and
// reads until serve closes. (libmicrohttpd reads a FIN that comes with the request's last bytes
// only at its next header deadline; one that comes after it read them, at once.)
template <typename Answered>
std::string exchange(std::uint16_t port, std::string_view request, Answered answered) {
  const util::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  const int connected = ::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address);
  require(connected == 0 || errno == EINPROGRESS, "serve refuses a connection");
  std::string received;
  bool sending = true;
  bool closing = false;
  auto sent = Clock::now();
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (true) {
    require(Clock::now() < deadline, "serve neither answered nor closed a connection in 5 s");
    pollfd watched{fd.get(), static_cast<short>(POLLIN | (sending ? POLLOUT : 0)), 0};
    const int ready = ::poll(&watched, 1, sending || closing ? 100 : 1);
    if (ready > 0 && sending && (watched.revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      const auto n = request.empty() ? 0 : ::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL);
      if (n > 0) request.remove_prefix(static_cast<std::size_t>(n));
      if (n < 0 && errno != EAGAIN) request = {};
      sending = !request.empty();
      sent = Clock::now();
    }
    if (ready > 0 && (watched.revents & (POLLIN | POLLERR | POLLHUP)) != 0) {
      char chunk[16384];
      const auto n = ::recv(fd.get(), chunk, sizeof chunk, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN)) return received;
      if (n > 0) received.append(chunk, static_cast<std::size_t>(n));
    }
    if (!sending && !closing && answered(received, Clock::now() - sent)) {
      ::shutdown(fd.get(), SHUT_WR);
      closing = true;
    }
  }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Node node;
  if (size > (1 << 16)) return 0;
  auto sections = fuzz::sections_of(std::string_view(reinterpret_cast<const char*>(data), size), node.upstream.address());
  const auto connections = std::move(sections.front());
  sections.pop_front();
  node.upstream.load(std::move(sections));

  serve::UpstreamSettings settings{{{node.upstream.address(), "up", false}}, {}};
  settings.client.max_attempts = 1;  // no backoff: a Retry-After would stall the run
  serve::Upstreams upstreams(std::move(settings));
  serve::Metrics metrics;
  serve::Mirror mirror(upstreams, node.host, metrics, node.watch, {});
  node.mirror = &mirror;
  std::string_view rest = connections;
  while (true) {
    const auto end = rest.find("\n---\n");
    const auto sent = rest.substr(0, end);
    const auto connection = requests_in(sent);
    const auto& requests = connection.requests;
    // Whole requests alone: the half-close once all are answered. With bytes after them that
    // serve may or may not answer (the rest of a head may never come): once the whole ones are,
    // and it had a moment to read the rest.
    const auto received = exchange(node.server->port(), sent, [&](std::string_view so_far, Clock::duration since) {
      const auto answers = answers_in(so_far, requests);
      const auto whole = connection.tail && !requests.empty() && !requests.back().whole ? requests.size() - 1
                                                                                       : requests.size();
      if (answers.size() < whole || (!answers.empty() && !answers.back().whole)) return false;
      return !connection.tail || since >= std::chrono::milliseconds(2);
    });
    const auto answers = answers_in(received, requests);
    // Only where this harness reads a request as serve does (a NUL in a target ends the path
    // libmicrohttpd hands on, for one).
    for (std::size_t i = 0; i < answers.size(); ++i) {
      if (requests[i].whole) check(requests[i], answers[i], upstreams.names());
    }
    if (!requests.empty() && requests.front().whole) require(!answers.empty(), "serve did not answer a request");
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 5);
  }
  node.wait_until_quiet();
  node.mirror = nullptr;
  return 0;
}
