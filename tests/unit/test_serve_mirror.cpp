// What the mirror answers without asking an upstream: health, metrics, the ping, and refusals
// with the registry error JSON (a method it does not serve, a registry it does not mirror, a bad
// name, a path outside the API); and the options it reads.

#include <doctest/doctest.h>

#include <sys/socket.h>

#include <thread>

#include "canned_server.hpp"
#include "hwimg/serve/mirror.hpp"
#include "hwimg/serve/server.hpp"
#include "hwimg/util/duration.hpp"
#include "hwimg/util/json_reader.hpp"
#include "test_select_support.hpp"

using namespace hwimg;

namespace {

struct Fixture {
  serve::Upstreams upstreams{{{{"127.0.0.1:5000", "local", false}}, {}}};
  serve::HostState host{[] { return Result<probe::HostFacts>(select_test::cpu_host("x86-64-v3")); }};
  serve::Metrics metrics;
  serve::Mirror mirror{upstreams, host, metrics, util::null_output(), {}};

  serve::HttpResponse get(std::string path, std::string method = "GET", serve::Fields query = {}) {
    serve::HttpRequest request;
    request.method = std::move(method);
    request.path = std::move(path);
    request.query = std::move(query);
    return mirror.handle(request);
  }
};

std::string code_of(const serve::HttpResponse& response) {
  const auto json = util::json::parse(response.body).value();
  return json["errors"][0]["code"].get<std::string>();
}

}  // namespace

TEST_CASE("health, the ping and the metrics") {
  Fixture f;
  REQUIRE(f.host.refresh());
  CHECK(f.get("/healthz").status == 200);
  const auto ping = f.get("/v2/");
  CHECK(ping.status == 200);
  CHECK(ping.header("Docker-Distribution-API-Version") == "registry/2.0");
  const auto metrics = f.get("/metrics");
  CHECK(metrics.header("Content-Type") == std::string(serve::Metrics::content_type));
  CHECK(metrics.body.find("hwimg_serve_requests_total{kind=\"ping\",code=\"200\"} 1") != std::string::npos);
}

TEST_CASE("refusals carry the registry error JSON") {
  Fixture f;
  const auto put = f.get("/v2/app/manifests/1", "PUT");
  CHECK(put.status == 405);
  CHECK(code_of(put) == "UNSUPPORTED");
  CHECK(put.header("Allow") == "GET, HEAD");
  const auto other = f.get("/v2/app/manifests/1", "GET", {{"ns", "registry.example.org"}});
  CHECK(other.status == 403);
  CHECK(code_of(other) == "DENIED");
  const auto bad = f.get("/v2/App/manifests/1");
  CHECK(bad.status == 400);
  CHECK(code_of(bad) == "NAME_INVALID");
  const auto outside = f.get("/v2/_catalog");
  CHECK(outside.status == 404);
  CHECK(code_of(outside) == "NAME_UNKNOWN");
}

TEST_CASE("upstreams: registries, NAME=HOST:PORT aliases, and what is refused") {
  const auto plain = serve::parse_upstream("registry.example.org");
  REQUIRE(plain);
  CHECK(plain->registry == "registry.example.org");
  CHECK(plain->alias.empty());
  const auto alias = serve::parse_upstream("internal=127.0.0.1:5000");
  REQUIRE(alias);
  CHECK(alias->registry == "127.0.0.1:5000");
  CHECK(alias->alias == "internal");
  CHECK(serve::parse_upstream("https://registry.example.org").error().exit_code == ExitCode::usage);
  CHECK(serve::parse_upstream("a:1=127.0.0.1:5000").error().message.find("without a port") != std::string::npos);
  const serve::Upstreams upstreams({{*plain, *alias}, {}});
  CHECK(upstreams.names() == std::vector<std::string>{"registry.example.org", "internal", "127.0.0.1:5000"});
  CHECK(upstreams.find("internal")->registry == "127.0.0.1:5000");
  CHECK(upstreams.find("127.0.0.1:5000")->alias == "internal");
  CHECK(upstreams.find("elsewhere") == nullptr);
}

TEST_CASE("--listen and durations") {
  CHECK(serve::parse_listen_address("127.0.0.1:5050").value() == std::pair<std::string, std::uint16_t>{"127.0.0.1", 5050});
  CHECK(serve::parse_listen_address("[::1]:0").value() == std::pair<std::string, std::uint16_t>{"::1", 0});
  CHECK(serve::parse_listen_address("127.0.0.1").error().exit_code == ExitCode::usage);
  CHECK_FALSE(serve::parse_listen_address("127.0.0.1:70000"));
  CHECK(util::parse_duration("60s").value() == std::chrono::seconds(60));
  CHECK(util::parse_duration("10m").value() == std::chrono::minutes(10));
  CHECK(util::parse_duration("500ms").value() == std::chrono::milliseconds(500));
  CHECK(util::parse_duration("2h").value() == std::chrono::hours(2));
  CHECK(util::parse_duration("30").value() == std::chrono::seconds(30));
  CHECK(util::parse_duration("1w").error().message == "invalid duration \"1w\": unknown unit \"w\" (expected ms, s, m, h or d)");
  CHECK(util::parse_duration("7d").value() == std::chrono::hours(7 * 24));
  CHECK_FALSE(util::parse_duration("s"));
}

namespace {

// A plain-HTTP upstream on 127.0.0.1 whose first `garbage` connections get bytes that are no HTTP;
// later ones get `/v2/` and one single-platform manifest. A TLS ClientHello (a client that took
// it for an HTTPS registry) is hung up on at once.
class BrokenThenGoodUpstream {
public:
  explicit BrokenThenGoodUpstream(int garbage) : m_garbage(garbage) {
    m_listener = test::listen_on_loopback(m_port);
    m_thread = std::thread([this] { serve(); });
  }
  ~BrokenThenGoodUpstream() {
    ::shutdown(m_listener.get(), SHUT_RDWR);
    m_thread.join();
  }
  [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(m_port); }
  static std::string manifest() {
    return R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{)"
           R"("mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:)" +
           std::string(64, 'a') + R"(","size":2},"layers":[]})";
  }

private:
  void serve() {
    while (true) {
      const util::UniqueFd fd(::accept(m_listener.get(), nullptr, nullptr));
      if (!fd.valid()) return;
      if (m_garbage-- > 0) {
        [[maybe_unused]] const auto sent = ::send(fd.get(), "\x01\x02garbage\r\n\r\n", 13, MSG_NOSIGNAL);
        continue;
      }
      std::string request;
      char buffer[4096];
      while (true) {
        const auto n = ::recv(fd.get(), buffer, sizeof buffer, 0);
        if (n <= 0 || buffer[0] == '\x16') break;
        request.append(buffer, static_cast<std::size_t>(n));
        const auto end = request.find("\r\n\r\n");
        if (end == std::string::npos) continue;
        const bool ping = request.starts_with("GET /v2/ ");
        const auto body = ping ? std::string("{}") : manifest();
        const auto answer = fmt::format("HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\n\r\n{}",
                                        ping ? "application/json" : "application/vnd.oci.image.manifest.v1+json",
                                        body.size(), body);
        [[maybe_unused]] const auto sent = ::send(fd.get(), answer.data(), answer.size(), MSG_NOSIGNAL);
        request.erase(0, end + 4);
      }
    }
  }

  int m_garbage;
  util::UniqueFd m_listener;
  std::uint16_t m_port = 0;
  std::thread m_thread;
};

}  // namespace

TEST_CASE("a tag fetch that failed does not leave its client in the pool: the next one works") {
  // An upstream's broken answer may leave a client mid-transfer, or sure the upstream speaks
  // HTTPS (issue 23, F7): pooled again, it failed every later tag until serve restarted.
  BrokenThenGoodUpstream upstream(1);
  serve::Upstreams upstreams({{{upstream.address(), "", false}}, {}});
  serve::HostState host{[] { return Result<probe::HostFacts>(select_test::cpu_host("x86-64-v3")); }};
  REQUIRE(host.refresh());
  serve::Metrics metrics;
  serve::Mirror mirror{upstreams, host, metrics, util::null_output(), {}};
  serve::HttpRequest request;
  request.method = "GET";
  request.path = "/v2/app/manifests/1.0";
  CHECK(mirror.handle(request).status == 503);
  const auto again = mirror.handle(request);
  CHECK(again.status == 200);
  CHECK(again.body == BrokenThenGoodUpstream::manifest());
}
