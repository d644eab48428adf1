#include <doctest/doctest.h>

#include <fmt/format.h>

#include "canned_server.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/client.hpp"

using namespace hwimg;
using namespace hwimg::registry;

namespace {

// A port on this machine that nothing listens on (it was free a moment ago).
std::uint16_t free_port() {
  std::uint16_t port = 0;
  static_cast<void>(test::listen_on_loopback(port));
  return port;
}

std::string manifest_answer(const std::string& body) {
  return fmt::format("HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\n\r\n{}", oci::media_type::manifest,
                     body.size(), body);
}

}  // namespace

TEST_CASE("a registry on this machine that is down is reported at once, and asked in its own scheme once it is up") {
  const auto port = free_port();
  // Not --plain-http: a registry on this machine is asked in plain HTTP first and may speak TLS.
  auto client = Client::create({});
  REQUIRE(client);
  const auto reference = parse_reference(fmt::format("127.0.0.1:{}/a:v1", port)).value();
  const auto down = client->get_manifest(reference);
  REQUIRE(!down);
  CHECK(down.error().message.find(fmt::format("failed to connect to 127.0.0.1:{}", port)) != std::string::npos);
  // Three attempts, not the eight (half a minute of backoff) a network failure gets.
  CHECK(client->requests() <= 3);

  // The refused connection said nothing about the scheme: the registry, now up in plain HTTP, is
  // asked in plain HTTP again (it was switched to TLS for good, and never answered again).
  const std::string body = R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
                           R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":)"
                           R"("sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},)"
                           R"("layers":[]})";
  test::CannedServer server({{manifest_answer(body)}}, port);
  const auto up = client->get_manifest(reference);
  REQUIRE_MESSAGE(up, up.error().message);
  CHECK(up->bytes == body);
  REQUIRE(server.requests().size() == 1);
  CHECK(server.requests()[0].starts_with("GET /v2/a/manifests/v1 HTTP/1.1\r\n"));
}
