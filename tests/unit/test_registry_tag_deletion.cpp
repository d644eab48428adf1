// registry/tag_deletion against canned answers: a registry with tag deletion deletes the tag
// alone (one DELETE of the tag, nothing else); one that allows no deletes at all is told apart by
// a digest no manifest has, and the tag is left untouched (no PUT); when the placeholder cannot be
// deleted, the tag is put back on its manifest. The placeholder way that succeeds is tested
// against Debian's registry in tests/integration/test_registry_tools.sh.

#include <doctest/doctest.h>

#include "canned_server.hpp"
#include "hwimg/oci/digest.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/tag_deletion.hpp"

using namespace hwimg;
using namespace hwimg::registry;

namespace {

using test::canned_client;

std::string manifest_answer(const std::string& body) {
  return fmt::format("HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\n\r\n{}", oci::media_type::manifest,
                     body.size(), body);
}

std::string error_answer(int status, std::string_view reason, std::string_view code, std::string_view message) {
  const auto body = fmt::format(R"({{"errors":[{{"code":"{}","message":"{}"}}]}})", code, message);
  return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}", status,
                     reason, body.size(), body);
}

const std::string manifest_bytes =
    R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":)"
    R"({"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},"layers":[]})";

}  // namespace

TEST_CASE("a registry with tag deletion deletes the tag alone: one GET, one DELETE of the tag") {
  test::CannedServer server({{manifest_answer(manifest_bytes)}, {"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"}});
  auto client = canned_client();
  const auto tag = parse_reference(server.address() + "/app:drop").value();
  const auto deleted = delete_tag(client, tag);
  REQUIRE_MESSAGE(deleted, deleted.error().message);
  CHECK(*deleted == oci::Digest::sha256_of(manifest_bytes));
  const auto requests = server.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].starts_with("GET /v2/app/manifests/drop HTTP/1.1\r\n"));
  CHECK(requests[1].starts_with("DELETE /v2/app/manifests/drop HTTP/1.1\r\n"));
}

TEST_CASE("a registry that allows no deletes leaves the tag untouched and says why") {
  const auto unsupported = error_answer(405, "Method Not Allowed", "UNSUPPORTED", "The operation is unsupported.");
  test::CannedServer server({{manifest_answer(manifest_bytes)}, {unsupported}, {unsupported}});
  auto client = canned_client();
  const auto tag = parse_reference(server.address() + "/app:drop").value();
  const auto deleted = delete_tag(client, tag);
  REQUIRE_FALSE(deleted.has_value());
  CHECK(deleted.error().message ==
        fmt::format("failed to delete {}: HTTP 405 UNSUPPORTED: The operation is unsupported. (the registry does not "
                    "allow deletes; a distribution registry needs storage.delete.enabled: true, "
                    "REGISTRY_STORAGE_DELETE_ENABLED=true)",
                    tag.str()));
  const auto requests = server.requests();
  REQUIRE(requests.size() == 3);
  CHECK(requests[1].starts_with("DELETE /v2/app/manifests/drop HTTP/1.1\r\n"));
  CHECK(requests[2].starts_with(fmt::format("DELETE /v2/app/manifests/{} HTTP/1.1\r\n",
                                            oci::Digest::sha256_of("hwimg: a manifest no registry holds").str())));
}

TEST_CASE("a missing tag is one line: no such tag, with the registry's status and code") {
  test::CannedServer server({{error_answer(404, "Not Found", "MANIFEST_UNKNOWN", "manifest unknown")}});
  auto client = canned_client();
  const auto tag = parse_reference(server.address() + "/app:gone").value();
  const auto deleted = delete_tag(client, tag);
  REQUIRE_FALSE(deleted.has_value());
  CHECK(deleted.error().message ==
        fmt::format("failed to delete {}: no such tag (HTTP 404 MANIFEST_UNKNOWN: manifest unknown)", tag.str()));
  CHECK(server.requests().size() == 1);
}

TEST_CASE("a placeholder that cannot be deleted: the tag is put back on its manifest, and the error says so") {
  const auto closed = [](std::string text) { return test::CannedServer::Answer{std::move(text), true}; };
  const std::string created = "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n";
  // Every answer closes its connection: the push's upload and manifest check go at once, each on
  // a connection of its own, which this server answers one after the other.
  test::CannedServer server({
      closed(manifest_answer(manifest_bytes)),
      closed(error_answer(400, "Bad Request", "DIGEST_INVALID", "provided digest did not match uploaded content")),
      closed("HTTP/1.1 202 Accepted\r\nLocation: /v2/app/blobs/uploads/1\r\nContent-Length: 0\r\n\r\n"),
      closed("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
      closed(created),
      closed(created),
      closed(error_answer(403, "Forbidden", "DENIED", "requested access to the resource is denied")),
      closed(fmt::format("HTTP/1.1 201 Created\r\nDocker-Content-Digest: {}\r\nContent-Length: 0\r\n\r\n",
                         oci::Digest::sha256_of(manifest_bytes).str())),
  });
  auto client = canned_client();
  const auto tag = parse_reference(server.address() + "/app:drop").value();
  const auto deleted = delete_tag(client, tag);
  REQUIRE_FALSE(deleted.has_value());

  const auto requests = server.requests();
  const auto bodies = server.bodies();
  REQUIRE(requests.size() == 8);
  CHECK(requests[2].starts_with("POST /v2/app/blobs/uploads/ HTTP/1.1\r\n"));
  CHECK(requests[3].starts_with("HEAD /v2/app/manifests/drop HTTP/1.1\r\n"));
  CHECK(requests[5].starts_with("PUT /v2/app/manifests/drop HTTP/1.1\r\n"));
  const auto placeholder = oci::Digest::sha256_of(bodies[5]);
  CHECK(bodies[5].find("hwimg delete: a placeholder") != std::string::npos);
  CHECK(requests[6].starts_with(fmt::format("DELETE /v2/app/manifests/{} HTTP/1.1\r\n", placeholder.str())));
  // The tag back on the manifest it named, byte for byte, with its media type.
  CHECK(requests[7].starts_with("PUT /v2/app/manifests/drop HTTP/1.1\r\n"));
  CHECK(requests[7].find(fmt::format("\r\nContent-Type: {}", oci::media_type::manifest)) != std::string::npos);
  CHECK(bodies[7] == manifest_bytes);

  auto placed = tag;
  placed.tag.clear();
  placed.digest = placeholder;
  CHECK(deleted.error().message ==
        fmt::format("failed to delete {}: failed to delete {}: HTTP 403 DENIED: requested access to the resource is "
                    "denied (the tag still names {})",
                    tag.str(), placed.str(), oci::Digest::sha256_of(manifest_bytes).str()));
}
