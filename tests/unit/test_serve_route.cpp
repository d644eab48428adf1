// The three request forms of a mirror (containerd's ?ns=, the path prefix, neither), the read-side
// API paths, and refusals: another registry, a bad name or digest, a path that is not the API.

#include <doctest/doctest.h>

#include "hwimg/serve/route.hpp"

using namespace hwimg;
using serve::RouteError;
using serve::RouteKind;

namespace {

const std::vector<std::string> upstreams{"registry.example.org", "127.0.0.1:5000", "docker.io", "internal"};
const std::string digest = "sha256:" + std::string(64, 'a');

}  // namespace

TEST_CASE("the ping") {
  CHECK(serve::parse_route("/v2/", std::nullopt, upstreams)->kind == RouteKind::ping);
  CHECK(serve::parse_route("/v2", std::nullopt, upstreams)->kind == RouteKind::ping);
}

TEST_CASE("containerd's ns parameter names the upstream") {
  const auto route = serve::parse_route("/v2/team/app/manifests/1.0", "127.0.0.1:5000", upstreams);
  REQUIRE(route);
  CHECK(route->kind == RouteKind::manifest);
  CHECK(route->upstream == "127.0.0.1:5000");
  CHECK(route->repository == "team/app");
  CHECK(route->reference == "1.0");
  CHECK_FALSE(route->by_digest());
  CHECK_FALSE(route->path_prefixed);
  // containerd's override_path form carries both; the prefix is dropped.
  const auto both = serve::parse_route("/v2/registry.example.org/team/app/blobs/" + digest, "registry.example.org",
                                       upstreams);
  REQUIRE(both);
  CHECK(both->repository == "team/app");
  CHECK(both->kind == RouteKind::blob);
  CHECK(both->reference == digest);
}

TEST_CASE("a path prefix names the upstream: a host without a port, or an alias") {
  const auto route = serve::parse_route("/v2/registry.example.org/team/app/manifests/" + digest, std::nullopt, upstreams);
  REQUIRE(route);
  CHECK(route->upstream == "registry.example.org");
  CHECK(route->repository == "team/app");
  CHECK(route->by_digest());
  CHECK(route->path_prefixed);
  const auto alias = serve::parse_route("/v2/internal/app/manifests/1.0", std::nullopt, upstreams);
  REQUIRE(alias);
  CHECK(alias->upstream == "internal");
  CHECK(alias->repository == "app");
}

TEST_CASE("a request naming no upstream goes to the first; Docker Hub names get library/") {
  const auto route = serve::parse_route("/v2/team/app/tags/list", std::nullopt, upstreams);
  REQUIRE(route);
  CHECK(route->kind == RouteKind::tags);
  CHECK(route->upstream == "registry.example.org");
  CHECK(route->repository == "team/app");
  const auto hub = serve::parse_route("/v2/docker.io/ubuntu/manifests/24.04", std::nullopt, upstreams);
  REQUIRE(hub);
  CHECK(hub->upstream == "docker.io");
  CHECK(hub->repository == "library/ubuntu");
  const auto referrers = serve::parse_route("/v2/team/app/referrers/" + digest, std::nullopt, upstreams);
  REQUIRE(referrers);
  CHECK(referrers->kind == RouteKind::referrers);
}

TEST_CASE("refusals: another registry, bad names and digests, other paths") {
  const auto other = serve::parse_route("/v2/app/manifests/1", "evil.example.com", upstreams);
  REQUIRE_FALSE(other);
  CHECK(other.error().error == RouteError::unknown_upstream);
  CHECK(other.error().message ==
        "upstream evil.example.com is not configured (hwimg serve mirrors only its --upstream registries)");
  CHECK(serve::parse_route("/v2/evil.example.com/app/manifests/1", std::nullopt, upstreams).error().error ==
        RouteError::unknown_upstream);
  CHECK(serve::parse_route("/v2/Team/App/manifests/1", std::nullopt, upstreams).error().error == RouteError::invalid);
  CHECK(serve::parse_route("/v2/team/app/manifests/bad tag", std::nullopt, upstreams).error().error ==
        RouteError::invalid);
  CHECK(serve::parse_route("/v2/team/app/blobs/sha256:zz", std::nullopt, upstreams).error().error ==
        RouteError::invalid);
  CHECK(serve::parse_route("/v2/team/app/blobs/uploads/", std::nullopt, upstreams).error().error ==
        RouteError::invalid);
  CHECK(serve::parse_route("/index.html", std::nullopt, upstreams).error().error == RouteError::not_found);
  CHECK(serve::parse_route("/v2/_catalog", std::nullopt, upstreams).error().error == RouteError::not_found);
  CHECK(serve::parse_route("/v2/app/manifests/1", std::nullopt, {}).error().error == RouteError::unknown_upstream);
}
