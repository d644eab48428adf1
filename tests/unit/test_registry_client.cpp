// Client reads and writes against a live registry. The registry, the proxy and the environment
// come from tests/integration/test_registry_client.sh; run alone, these cases skip.

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "canned_server.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/util/strings.hpp"

using namespace hwimg;
using namespace hwimg::registry;

namespace {

struct LiveRegistry {
  std::string address;  // host:port of a plain-HTTP proxy in front of the registry
  std::string repository;
  std::string index_digest;
  std::vector<std::string> tags;
  std::string docker_config;
};

std::optional<LiveRegistry> live_registry() {
  const char* address = std::getenv("HWIMG_TEST_REGISTRY");
  if (address == nullptr) return std::nullopt;
  const auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value != nullptr ? value : "");
  };
  return LiveRegistry{address, env("HWIMG_TEST_REPOSITORY"), env("HWIMG_TEST_INDEX_DIGEST"),
                      util::split(env("HWIMG_TEST_TAGS"), ','), env("HWIMG_TEST_DOCKER_CONFIG")};
}

Client make_client(const LiveRegistry& live) {
  ClientOptions options;
  options.plain_http = true;
  options.docker_config_dir = live.docker_config;
  auto client = Client::create(options);
  REQUIRE(client);
  return std::move(*client);
}

Reference reference(const LiveRegistry& live, std::string_view suffix) {
  auto ref = parse_reference(live.address + "/" + live.repository + std::string(suffix));
  REQUIRE(ref);
  return *ref;
}

}  // namespace

TEST_CASE("registry client: one GET of an index costs one request, the stored Basic credentials sent with it") {
  const auto live = live_registry();
  if (!live) {
    MESSAGE("skipped: needs the registry started by tests/integration/test_registry_client.sh");
    return;
  }
  auto client = make_client(*live);
  auto index = client.get_manifest(reference(*live, ":v1"));
  REQUIRE_MESSAGE(index, index.error().message);
  CHECK(index->digest.str() == live->index_digest);
  CHECK(index->media_type == oci::media_type::index);
  CHECK(oci::Digest::sha256_of(index->bytes) == index->digest);
  CHECK(client.requests() == 1);  // no 401 first: the stored credentials go with the first GET

  auto again = client.get_manifest(reference(*live, "@" + live->index_digest));
  REQUIRE_MESSAGE(again, again.error().message);
  CHECK(again->bytes == index->bytes);
  CHECK(client.requests() == 2);  // credentials reused, connection kept
}

TEST_CASE("registry client: manifests, blobs and tags") {
  const auto live = live_registry();
  if (!live) {
    MESSAGE("skipped: needs the registry started by tests/integration/test_registry_client.sh");
    return;
  }
  auto client = make_client(*live);
  const auto repo = reference(*live, "");
  auto index_bytes = client.get_manifest(reference(*live, ":v1"));
  REQUIRE(index_bytes);
  auto index = oci::parse_index(index_bytes->bytes);
  REQUIRE(index);
  REQUIRE(!index->manifests.empty());

  const auto& child = index->manifests.front();
  auto manifest_bytes = client.get_manifest(reference(*live, "@" + child.digest.str()));
  REQUIRE_MESSAGE(manifest_bytes, manifest_bytes.error().message);
  CHECK(manifest_bytes->media_type == oci::media_type::manifest);
  CHECK(manifest_bytes->digest == child.digest);
  auto manifest = oci::parse_manifest(manifest_bytes->bytes);
  REQUIRE(manifest);

  auto size = client.head_blob(repo, manifest->config.digest);
  REQUIRE_MESSAGE(size, size.error().message);
  CHECK(*size == manifest->config.size);
  auto config = client.get_blob(repo, manifest->config.digest, 1 << 20);
  REQUIRE_MESSAGE(config, config.error().message);
  CHECK(oci::Digest::sha256_of(*config) == manifest->config.digest);
  auto too_small = client.get_blob(repo, manifest->config.digest, 10);
  REQUIRE(!too_small);
  CHECK(too_small.error().message ==
        fmt::format("failed to get blob {} from {}: answer larger than 10 bytes",
                    manifest->config.digest.str(), repo.name()));
  const auto absent = oci::Digest::sha256_of("not in the registry");
  auto missing = client.head_blob(repo, absent);
  REQUIRE(missing);
  CHECK(!missing->has_value());

  auto copied = client.put_manifest(reference(*live, ":copy"), index_bytes->bytes, index_bytes->media_type);
  REQUIRE_MESSAGE(copied, copied.error().message);
  CHECK(*copied == index_bytes->digest);

  auto tags = client.list_tags(repo);
  REQUIRE_MESSAGE(tags, tags.error().message);
  auto expected = live->tags;
  expected.push_back("copy");
  std::sort(expected.begin(), expected.end());
  CHECK(*tags == expected);

  auto unknown = client.get_manifest(reference(*live, ":no-such-tag"));
  REQUIRE(!unknown);
  CHECK(unknown.error().message.starts_with(
      fmt::format("failed to get manifest {}:no-such-tag: no tag no-such-tag in {} (HTTP 404 MANIFEST_UNKNOWN); it has ",
                  repo.name(), repo.name())));
  CHECK(unknown.error().message.ends_with(fmt::format("(hwimg ls {})", repo.name())));
}

namespace {

std::string tags_page(std::string_view tags, std::string_view link) {
  const auto body = fmt::format(R"({{"name":"a","tags":[{}]}})", tags);
  return fmt::format("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{}Content-Length: {}\r\n\r\n{}",
                     link.empty() ? std::string() : fmt::format("Link: {}\r\n", link), body.size(), body);
}

using test::canned_client;

}  // namespace

TEST_CASE("canned registry: a page size asks ?n= and follows Link to the last page; none asks no n") {
  test::CannedServer server({{tags_page(R"("b","a")", R"(</v2/a/tags/list?last=b&n=2>; rel="next")")},
                             {tags_page(R"("d","c")", R"(</v2/a/tags/list?last=d&n=2>; rel="next")")},
                             {tags_page(R"("e")", "")},
                             {tags_page(R"("x")", "")}});
  auto client = canned_client();
  const auto repository = parse_reference(server.address() + "/a").value();
  const auto paged = client.list_tags(repository, 2);
  REQUIRE_MESSAGE(paged, paged.error().message);
  CHECK(*paged == std::vector<std::string>{"a", "b", "c", "d", "e"});
  const auto whole = client.list_tags(repository);
  REQUIRE_MESSAGE(whole, whole.error().message);
  CHECK(*whole == std::vector<std::string>{"x"});
  const auto requests = server.requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests[0].starts_with("GET /v2/a/tags/list?n=2 HTTP/1.1\r\n"));
  CHECK(requests[1].starts_with("GET /v2/a/tags/list?last=b&n=2 HTTP/1.1\r\n"));
  CHECK(requests[2].starts_with("GET /v2/a/tags/list?last=d&n=2 HTTP/1.1\r\n"));
  CHECK(requests[3].starts_with("GET /v2/a/tags/list HTTP/1.1\r\n"));
}

TEST_CASE("canned registry: a missing repository is named with the catalogue's strings only, a partial catalogue "
          "says nothing") {
  const auto json_answer = [](std::string_view status, std::string_view body, std::string_view extra = "") {
    return fmt::format("HTTP/1.1 {}\r\nContent-Type: application/json\r\n{}Content-Length: {}\r\n\r\n{}", status,
                       extra, body.size(), body);
  };
  const std::string unknown = R"({"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry"}]})";
  // A hostile catalogue: names of every JSON type, of which only the strings are names.
  const std::string hostile = R"({"repositories":["team/stencil",7,null,{"name":"x"},["y"],"demo/stencil"]})";
  test::CannedServer server({{json_answer("404 Not Found", unknown)},
                             {json_answer("200 OK", hostile)},
                             {json_answer("404 Not Found", unknown)},
                             {json_answer("200 OK", R"({"repositories":["a"]})", "Link: </v2/_catalog?last=a&n=1000>; rel=\"next\"\r\n")}});
  auto client = canned_client();
  const auto reference = parse_reference(server.address() + "/demo/stencl:1.0").value();
  const auto named = client.get_manifest(reference);
  REQUIRE(!named);
  CHECK(named.error().message ==
        fmt::format("failed to get manifest {}: no repository {}/demo/stencl (HTTP 404 NAME_UNKNOWN); nearest in {}'s "
                    "catalogue: demo/stencil, team/stencil",
                    reference.str(), server.address(), server.address()));
  const auto partial = client.get_manifest(reference);
  REQUIRE(!partial);
  CHECK(partial.error().message ==
        fmt::format("failed to get manifest {}: HTTP 404 NAME_UNKNOWN: repository name not known to registry",
                    reference.str()));
  const auto requests = server.requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests[1].starts_with("GET /v2/_catalog?n=1000 HTTP/1.1\r\n"));
}

TEST_CASE("canned registry: delete by digest, and a registry's refusal with its status and code") {
  const std::string refusal = R"({"errors":[{"code":"UNSUPPORTED","message":"The operation is unsupported."}]})";
  test::CannedServer server(
      {{"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"},
       {fmt::format("HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
                    refusal.size(), refusal)}});
  auto client = canned_client();
  const auto digest = oci::Digest::sha256_of("manifest");
  const auto reference = parse_reference(server.address() + "/a@" + digest.str()).value();
  const auto deleted = client.delete_manifest(reference);
  REQUIRE_MESSAGE(deleted, deleted.error().message);
  CHECK(*deleted == digest);
  const auto refused = client.delete_manifest(reference);
  REQUIRE(!refused);
  CHECK(refused.error().message ==
        fmt::format("failed to delete {}: HTTP 405 UNSUPPORTED: The operation is unsupported. (the registry does not "
                    "allow deletes; a distribution registry needs storage.delete.enabled: true, "
                    "REGISTRY_STORAGE_DELETE_ENABLED=true)",
                    reference.str()));
  const auto requests = server.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].starts_with(fmt::format("DELETE /v2/a/manifests/{} HTTP/1.1\r\n", digest.str())));
}

TEST_CASE("canned registry: a streamed body is read at most 256 KiB (and a piece) ahead of its reader") {
  // 16 MiB sent at once, far more than the sockets hold: the transport could read as far ahead as
  // it liked (serve relaying a blob to a slow node held ~1.6 MiB per stream this way).
  const std::string body(std::size_t{16} << 20, 'b');
  test::CannedServer server({{fmt::format("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.size()) + body}});
  auto client = test::canned_client();
  const auto repository = parse_reference(server.address() + "/app").value();
  const auto answer = client.open_stream(repository, ReadMethod::get, "blobs/sha256:" + std::string(64, '0'), {});
  REQUIRE_MESSAGE(answer, answer.error().message);
  REQUIRE(answer->streamed);
  std::size_t received = 0;
  std::size_t most = 0;
  for (int pieces = 0;; ++pieces) {
    // A reader busy elsewhere now and then, while the sender fills the sockets.
    if (pieces % 32 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto piece = client.next_chunk();
    REQUIRE_MESSAGE(piece, piece.error().message);
    if (!*piece) break;
    received += (*piece)->size();
    most = std::max(most, client.read_ahead() + (*piece)->size());
  }
  CHECK(received == body.size());
  CHECK(client.read_ahead() == 0);
  // libcurl hands over at most 16 KiB at a time (CURL_MAX_WRITE_SIZE).
  CHECK(most <= (256 + 16) * 1024);
}
