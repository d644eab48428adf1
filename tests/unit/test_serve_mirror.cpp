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

// A mirror of one upstream for an x86-64-v3 node without GPUs.
struct Fixture {
  explicit Fixture(std::string upstream = "127.0.0.1:5000", std::string name = "local")
      : upstreams{{{{std::move(upstream), std::move(name), false}}, {}}} {}

  serve::Upstreams upstreams;
  serve::HostState host{[] { return Result<probe::HostFacts>(select_test::cpu_host("x86-64-v3")); }};
  serve::Metrics metrics;
  serve::Mirror mirror{upstreams, host, metrics, util::null_output(), {}};

  serve::HttpResponse get(std::string path, std::string method = "GET", serve::Fields query = {},
                          serve::Fields headers = {}) {
    serve::HttpRequest request;
    request.method = std::move(method);
    request.path = std::move(path);
    request.query = std::move(query);
    request.headers = std::move(headers);
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
  Fixture fixture(upstream.address(), "");
  REQUIRE(fixture.host.refresh());
  CHECK(fixture.get("/v2/app/manifests/1.0").status == 503);
  const auto again = fixture.get("/v2/app/manifests/1.0");
  CHECK(again.status == 200);
  CHECK(again.body == BrokenThenGoodUpstream::manifest());
}

TEST_CASE("an upstream's bytes that are no UTF-8, quoted in an error, make a 503 with JSON, not an exception") {
  // Found by fuzz/fuzz_serve: a manifest's Content-Type with the byte 0xF1 was quoted in the
  // error, whose JSON dump threw type_error 316 out of the handler.
  const auto manifest = BrokenThenGoodUpstream::manifest();
  test::CannedServer upstream({{fmt::format("HTTP/1.1 200 OK\r\nContent-Type: application/vn\xf1.oci.image.manifest.v1+json"
                                            "\r\nContent-Length: {}\r\n\r\n{}",
                                            manifest.size(), manifest)}});
  Fixture fixture(upstream.address(), "");
  REQUIRE(fixture.host.refresh());
  const auto answer = fixture.get("/v2/app/manifests/1.0");
  CHECK(answer.status == 503);
  CHECK(code_of(answer) == "UNAVAILABLE");
  CHECK(answer.body.find("\xef\xbf\xbd") != std::string::npos);  // U+FFFD where the byte was
}

namespace {

// The mirror of one canned upstream, for the request `method` `path`.
serve::HttpResponse through_canned(const std::vector<test::CannedServer::Answer>& answers, std::string method,
                                   std::string path, serve::Fields headers = {}) {
  test::CannedServer upstream(answers);
  Fixture fixture(upstream.address(), "");
  REQUIRE(fixture.host.refresh());
  auto response = fixture.get(std::move(path), std::move(method), {}, std::move(headers));
  // A streamed body is read while its upstream is still there.
  if (response.stream) {
    while (true) {
      auto piece = response.stream();
      if (!piece) {
        response.body = "(cut: " + piece.error().message + ")";
        break;
      }
      if (!*piece) break;
      response.body += **piece;
    }
    response.stream = nullptr;
  }
  return response;
}

std::string blob_path() {
  return "/v2/app/blobs/" + oci::Digest::sha256_of("the blob").str();
}

}  // namespace

TEST_CASE("a by-digest answer from an upstream that names another digest is refused, not passed on") {
  // Found by fuzz/fuzz_serve: a HEAD of a blob passed on the upstream's Docker-Content-Digest,
  // which named another digest than the one asked.
  const auto wrong = "sha256:" + std::string(64, '0');
  const auto head = through_canned({{"HTTP/1.1 200 OK\r\nDocker-Content-Digest: " + wrong + "\r\nContent-Length: 8\r\n\r\n"}},
                                   "HEAD", blob_path());
  CHECK(head.status == 503);
  CHECK(head.body.find(wrong) != std::string::npos);
  const auto right = oci::Digest::sha256_of("the blob").str();
  const auto good = through_canned(
      {{"HTTP/1.1 200 OK\r\nDocker-Content-Digest: " + right + "\r\nContent-Length: 8\r\n\r\nthe blob"}}, "GET",
      blob_path());
  CHECK(good.status == 200);
  CHECK(good.header("Docker-Content-Digest") == right);
  CHECK(good.body == "the blob");
}

TEST_CASE("a by-digest body is checked on every success status, not only 200") {
  // Found by fuzz/fuzz_serve: a 203 passed "not the blob" on whole for the blob's digest.
  const auto odd = through_canned({{"HTTP/1.1 203 Non-Authoritative Information\r\nContent-Length: 12\r\n\r\nnot the blob"}},
                                  "GET", blob_path());
  CHECK(odd.body.starts_with("(cut: "));
  // A 206 for a Range the client asked is a part, which no digest covers.
  const auto part = through_canned({{"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-3/8\r\nContent-Length: 4\r\n\r\nthe "}},
                                   "GET", blob_path(), {{"range", "bytes=0-3"}});
  CHECK(part.status == 206);
  CHECK(part.body == "the ");
  const auto unasked = through_canned({{"HTTP/1.1 206 Partial Content\r\nContent-Length: 4\r\n\r\nthe "}}, "GET", blob_path());
  CHECK(unasked.body.starts_with("(cut: "));
}

TEST_CASE("a tag answered with a success other than 200 is not passed on unjudged") {
  // Found by fuzz/fuzz_serve: a 203 for a tag went to the client as it was, its body unjudged and
  // its Docker-Content-Digest unchecked.
  const auto manifest = BrokenThenGoodUpstream::manifest();
  const auto answer = through_canned(
      {{fmt::format("HTTP/1.1 203 Non-Authoritative Information\r\nContent-Type: application/vnd.oci.image.manifest.v1+json"
                    "\r\nDocker-Content-Digest: sha256:{}\r\nContent-Length: {}\r\n\r\n{}",
                    std::string(64, '0'), manifest.size(), manifest)}},
      "GET", "/v2/app/manifests/1.0");
  CHECK(answer.status == 503);
  CHECK(code_of(answer) == "UNAVAILABLE");
}

TEST_CASE("an upstream header whose value has a control character is not passed on") {
  // Found by fuzz/fuzz_serve: a Content-Type with a bare CR was passed on; libmicrohttpd refused
  // it, and with it the whole answer: the connection closed unanswered.
  const auto right = oci::Digest::sha256_of("the blob").str();
  const auto answer = through_canned(
      {{"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\xff\xff\r\nDocker-Content-Digest: " + right +
        "\r\nContent-Length: 8\r\n\r\nthe blob"}},
      "GET", blob_path());
  CHECK(answer.status == 200);
  CHECK(answer.body == "the blob");
  CHECK(answer.header("Content-Type") == std::nullopt);
  CHECK(answer.header("Docker-Content-Digest") == right);
}

TEST_CASE("a by-digest body that came whole, not streamed, is checked too") {
  // Found by fuzz/fuzz_serve: an answer whose head was cut off ("200 OK", then the connection
  // closed) came back whole and empty, and went to the client as the blob: only streamed bodies
  // were verified.
  const auto answer = through_canned({{"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream", true}}, "GET",
                                     blob_path());
  CHECK(answer.status == 503);
  CHECK(answer.body.find("hashes to " + oci::Digest::sha256_of("").str()) != std::string::npos);
}

TEST_CASE("an upstream status outside 200-599 is not passed on") {
  // Found by fuzz/fuzz_serve: an upstream's "746" went to the client as the answer's status.
  const auto answer = through_canned({{"HTTP/1.1 746 Odd\r\nContent-Length: 0\r\n\r\n"}}, "GET", blob_path());
  CHECK(answer.status == 503);
  CHECK(answer.body.find("status 746") != std::string::npos);
  const auto tag = through_canned({{"HTTP/1.1 746 Odd\r\nContent-Length: 0\r\n\r\n"}}, "GET", "/v2/app/manifests/1.0");
  CHECK(tag.status == 503);
}

TEST_CASE("a HEAD answered without a Content-Length is never sent as a chunked stream") {
  // Found by fuzz/fuzz_serve: an empty stream of unknown size went out chunked, and libmicrohttpd
  // sent the chunked body's end ("0\r\n\r\n") after the HEAD answer, which the client read as the
  // start of its next answer.
  const auto blob = through_canned({{"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n", true}}, "HEAD",
                                   blob_path());
  CHECK(blob.status == 503);
  CHECK(blob.body.find("without a Content-Length") != std::string::npos);
  const auto tags = through_canned({{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n", true}}, "HEAD",
                                   "/v2/app/tags/list");
  CHECK(tags.status == 200);
  CHECK_FALSE(tags.stream_size.has_value());
  CHECK(tags.body.empty());
}

TEST_CASE("an upstream header with an empty value is not passed on") {
  // Found by fuzz/fuzz_serve: "Content-Type: " (then CRs) came through as an empty value, which
  // libmicrohttpd refused, and with it the whole answer: the connection closed unanswered.
  const auto answer = through_canned({{"HTTP/1.1 200 OK\r\nContent-Type: \r\nContent-Length: 2\r\n\r\n{}"}}, "GET",
                                     "/v2/app/tags/list");
  CHECK(answer.status == 200);
  CHECK(answer.header("Content-Type") == std::nullopt);
  CHECK(answer.body == "{}");
}
