// What the mirror answers without asking an upstream: health, metrics, the ping, and refusals
// with the registry error JSON (a method it does not serve, a registry it does not mirror, a bad
// name, a path outside the API); and the options it reads.

#include <doctest/doctest.h>

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
  CHECK(util::parse_duration("1d").error().message == "invalid duration \"1d\": unknown unit \"d\" (expected ms, s, m or h)");
  CHECK_FALSE(util::parse_duration("s"));
}
