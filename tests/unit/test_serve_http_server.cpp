// The HTTP server under `hwimg serve` over real sockets on 127.0.0.1: a handler that throws
// answers 500 and the server goes on; streamed bodies arrive whole or cut short; requests beyond
// the fetch workers wait, then get 503, while /healthz answers at once; a header sent too slowly
// and connections beyond a client's limit are closed; a stop with requests in flight ends.

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "canned_server.hpp"
#include "hwimg/serve/http_server.hpp"

using namespace hwimg;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

util::UniqueFd connect_to(std::uint16_t port) {
  util::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  return fd;
}

void send_text(int fd, std::string_view text) {
  REQUIRE(::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size()));
}

// Whether the server closed `fd` (or reset it) within `timeout`; what it sent meanwhile is read.
bool closed_within(int fd, std::chrono::milliseconds timeout, std::string* received = nullptr) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    pollfd wait{fd, POLLIN, 0};
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (::poll(&wait, 1, static_cast<int>(std::max<long>(left, 1))) <= 0) continue;
    char buffer[16384];
    const auto n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return true;
    if (received != nullptr) received->append(buffer, static_cast<std::size_t>(n));
  }
  return false;
}

struct Reply {
  unsigned status = 0;  // 0: no complete answer (cut off, or none within the time)
  std::string head;
  std::string body;
  bool complete = false;  // the body is as long as its Content-Length said
};

// One request on a new connection; the answer read until the server closes or `timeout` passes.
Reply ask(std::uint16_t port, std::string_view path, std::chrono::milliseconds timeout = 5s) {
  const auto fd = connect_to(port);
  send_text(fd.get(), fmt::format("GET {} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path));
  std::string text;
  closed_within(fd.get(), timeout, &text);
  Reply reply;
  const auto end = text.find("\r\n\r\n");
  if (!text.starts_with("HTTP/1.1 ") || end == std::string::npos) return reply;
  reply.status = static_cast<unsigned>(std::stoul(text.substr(9, 3)));
  reply.head = text.substr(0, end);
  reply.body = text.substr(end + 4);
  const auto length = reply.head.find("Content-Length: ");
  reply.complete = length != std::string::npos &&
                   std::stoul(reply.head.substr(length + 16)) == reply.body.size();
  return reply;
}

serve::HttpResponse text(unsigned status, std::string body) {
  serve::HttpResponse response;
  response.status = status;
  response.headers = {{"Content-Type", "text/plain"}};
  response.body = std::move(body);
  return response;
}

// /healthz answered at once; /throw-now throws on the event loop; everything else goes to
// `fetch`. Failures are "failure STATUS: MESSAGE".
serve::Handlers handlers(std::function<serve::HttpResponse(const serve::HttpRequest&)> fetch) {
  return {[](const serve::HttpRequest& request) -> std::optional<serve::HttpResponse> {
            if (request.path == "/healthz") return text(200, "ok\n");
            if (request.path == "/throw-now") throw std::runtime_error("boom on the event loop");
            return std::nullopt;
          },
          std::move(fetch),
          [](unsigned status, std::string_view message) { return text(status, fmt::format("failure {}: {}", status, message)); }};
}

serve::ServerSettings settings_on_any_port() {
  serve::ServerSettings settings;
  settings.port = 0;
  return settings;
}

std::unique_ptr<serve::HttpServer> start(const serve::ServerSettings& settings, serve::Handlers handlers) {
  auto server = serve::HttpServer::start(settings, std::move(handlers));
  REQUIRE_MESSAGE(server, server.error().message);
  return std::move(*server);
}

}  // namespace

TEST_CASE("a handler that throws answers 500, and the server goes on") {
  auto server = start(settings_on_any_port(), handlers([](const serve::HttpRequest& request) {
                        if (request.path == "/throw") throw std::runtime_error("boom");
                        return text(200, "fetched\n");
                      }));
  const auto thrown = ask(server->port(), "/throw");
  CHECK(thrown.status == 500);
  CHECK(thrown.body == "failure 500: an unexpected error");
  CHECK(ask(server->port(), "/throw-now").status == 500);
  CHECK(ask(server->port(), "/healthz").body == "ok\n");
  CHECK(ask(server->port(), "/fetch").body == "fetched\n");
}

TEST_CASE("a streamed body arrives whole through the bounded buffer, a broken one is cut short") {
  const std::string piece(100'000, 'x');  // 40 pieces: many times the buffer
  auto server = start(settings_on_any_port(), handlers([&](const serve::HttpRequest& request) {
                        auto sent = std::make_shared<int>(0);
                        const bool breaks = request.path == "/broken";
                        serve::HttpResponse response;
                        response.stream_size = 40 * piece.size();
                        response.stream = [&piece, sent, breaks]() -> Result<std::optional<std::string>> {
                          if (*sent == 40) return std::optional<std::string>();
                          if (breaks && *sent == 20) return fail("the upstream broke off");
                          ++*sent;
                          return std::optional<std::string>(piece);
                        };
                        return response;
                      }));
  const auto whole = ask(server->port(), "/whole");
  CHECK(whole.status == 200);
  CHECK(whole.complete);
  CHECK(whole.body.size() == 40 * piece.size());
  const auto broken = ask(server->port(), "/broken");
  CHECK_FALSE(broken.complete);
  CHECK(broken.body.size() <= 20 * piece.size());
  CHECK(ask(server->port(), "/healthz").status == 200);
}

TEST_CASE("beyond the fetch workers requests wait, then get 503 with Retry-After; /healthz answers meanwhile") {
  auto settings = settings_on_any_port();
  settings.fetch_limit = 1;
  settings.fetch_wait = 500ms;
  std::latch release(1);
  std::atomic<int> started = 0;
  auto server = start(settings, handlers([&](const serve::HttpRequest&) {
                        ++started;
                        release.wait();
                        return text(200, "fetched\n");
                      }));
  auto first = std::async(std::launch::async, [&] { return ask(server->port(), "/first", 10s); });
  while (started == 0) std::this_thread::sleep_for(10ms);

  const auto asked = Clock::now();
  const auto second = ask(server->port(), "/second");
  const auto waited = Clock::now() - asked;
  CHECK(second.status == 503);
  CHECK(second.head.find("Retry-After: 5") != std::string::npos);
  CHECK(waited >= 450ms);
  CHECK(waited < 3s);

  const auto probed = Clock::now();
  CHECK(ask(server->port(), "/healthz").status == 200);
  CHECK(Clock::now() - probed < 1s);
  CHECK(server->load().fetches_running == 1);
  CHECK(server->load().busy_refusals == 1);

  release.count_down();
  CHECK(first.get().body == "fetched\n");
  CHECK(started == 1);
}

TEST_CASE("a connection whose request header takes too long is closed, a byte at a time or not") {
  auto settings = settings_on_any_port();
  settings.header_timeout = 700ms;
  auto server = start(settings, handlers([](const serve::HttpRequest&) { return text(200, "fetched\n"); }));
  const auto idle = connect_to(server->port());
  const auto trickling = connect_to(server->port());
  send_text(trickling.get(), "GET /slow HTTP/1.1\r\n");
  const auto opened = Clock::now();
  bool closed = false;
  // One byte every 100 ms: libmicrohttpd's idle timeout alone would never fire.
  while (!closed && Clock::now() - opened < 5s) {
    if (::send(trickling.get(), "X", 1, MSG_NOSIGNAL) != 1) break;
    closed = closed_within(trickling.get(), 100ms);
  }
  const auto lasted = Clock::now() - opened;
  CHECK(lasted >= 600ms);
  CHECK(lasted < 3s);
  CHECK(closed_within(idle.get(), 2s));
  CHECK(server->load().header_timeouts >= 2);

  // A request sent in time is answered, and its kept-alive connection gets a new deadline.
  const auto kept = connect_to(server->port());
  send_text(kept.get(), "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string received;
  CHECK(closed_within(kept.get(), 3s, &received));
  CHECK(received.find("fetched") != std::string::npos);
}

TEST_CASE("connections beyond one client's limit are refused") {
  auto settings = settings_on_any_port();
  settings.client_limit = 2;
  auto server = start(settings, handlers([](const serve::HttpRequest&) { return text(200, "fetched\n"); }));
  const auto a = connect_to(server->port());
  const auto b = connect_to(server->port());
  CHECK_FALSE(closed_within(a.get(), 200ms));
  const auto c = connect_to(server->port());
  CHECK(closed_within(c.get(), 2s));
  CHECK_FALSE(closed_within(b.get(), 100ms));
}

TEST_CASE("a stop with requests waiting for an upstream and streams in flight ends, answering or cutting them") {
  auto settings = settings_on_any_port();
  settings.fetch_limit = 2;
  std::atomic<bool> stopping = false;
  auto server = start(settings, handlers([&](const serve::HttpRequest& request) {
                        if (request.path == "/slow") {
                          std::this_thread::sleep_for(300ms);
                          return text(200, "late\n");
                        }
                        serve::HttpResponse response;
                        response.stream = [&stopping]() -> Result<std::optional<std::string>> {
                          std::this_thread::sleep_for(20ms);
                          if (stopping) return fail("stopped");
                          return std::optional<std::string>("chunk");
                        };
                        return response;
                      }));
  const auto port = server->port();
  const auto wait_for_load = [&](std::size_t running, std::size_t waiting) {
    const auto deadline = Clock::now() + 5s;
    while (Clock::now() < deadline &&
           (server->load().fetches_running != running || server->load().fetches_waiting != waiting)) {
      std::this_thread::sleep_for(5ms);
    }
  };
  auto slow = std::async(std::launch::async, [&] { return ask(port, "/slow", 10s); });
  auto endless = std::async(std::launch::async, [&] { return ask(port, "/endless", 10s); });
  wait_for_load(2, 0);
  auto queued = std::async(std::launch::async, [&] { return ask(port, "/queued", 10s); });
  wait_for_load(2, 1);
  const auto began = Clock::now();
  server->shutdown(100ms);
  stopping = true;
  CHECK(Clock::now() - began < 3s);
  CHECK_FALSE(endless.get().complete);
  const auto answer = queued.get();
  CHECK_MESSAGE((answer.status == 0 || answer.status == 503), answer.head);
  (void)slow.get();
}

TEST_CASE("a request body sent a byte at a time is cut at the header's deadline too") {
  auto settings = settings_on_any_port();
  settings.header_timeout = 700ms;
  auto server = start(settings, handlers([](const serve::HttpRequest&) { return text(200, "fetched\n"); }));
  const auto fd = connect_to(server->port());
  send_text(fd.get(), "PUT /v2/app/blobs/uploads/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nX");
  const auto opened = Clock::now();
  bool closed = false;
  while (!closed && Clock::now() - opened < 5s) {
    if (::send(fd.get(), "X", 1, MSG_NOSIGNAL) != 1) break;
    closed = closed_within(fd.get(), 100ms);
  }
  CHECK(Clock::now() - opened < 3s);
  // A body sent whole is read and the request answered as before.
  const auto whole = connect_to(server->port());
  send_text(whole.get(), "PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
  std::string received;
  CHECK(closed_within(whole.get(), 3s, &received));
  CHECK(received.starts_with("HTTP/1.1 200 "));
}

TEST_CASE("a streamed body that breaks off closes its connection at once, not at the idle timeout") {
  // How a client learns of a blob whose bytes are not its digest (the mirror's verified stream
  // breaks off before its last piece): the connection closes then, not at the idle timeout
  // (120 s by default). fuzz/fuzz_serve reads every answer to the server's close.
  auto server = start(settings_on_any_port(), handlers([](const serve::HttpRequest& request) {
                        serve::HttpResponse response;
                        response.stream_size = 12;
                        auto first = std::make_shared<bool>(request.path == "/data-then-break");
                        response.stream = [first]() -> Result<std::optional<std::string>> {
                          if (std::exchange(*first, false)) return std::optional<std::string>("not ");
                          return fail("the digest is wrong");
                        };
                        return response;
                      }));
  for (const auto* path : {"/break", "/data-then-break"}) {
    CAPTURE(path);
    const auto fd = connect_to(server->port());
    send_text(fd.get(), fmt::format("GET {} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path));
    std::string received;
    CHECK(closed_within(fd.get(), 2s, &received));
    CHECK(received.starts_with("HTTP/1.1 200"));
  }
}
