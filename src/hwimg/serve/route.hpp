#pragma once
// Which upstream registry, repository and object a mirror request names, in the three forms
// runtimes use (docs/serve.md#requests):
//   containerd hosts.toml mirror   /v2/<repository>/manifests/<ref>?ns=<upstream>
//   path prefix (CRI-O, podman,    /v2/<upstream>/<repository>/manifests/<ref>  (<upstream>: a
//   skopeo, enroot, direct refs)   registry without a port, or an alias given as --upstream NAME=...)
//   neither                        /v2/<repository>/...  -> the first --upstream

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::serve {

enum class RouteKind { ping, manifest, blob, tags, referrers };

struct Route {
  RouteKind kind = RouteKind::ping;
  std::string upstream;    // as the request named it: "registry.example.org", "127.0.0.1:5000", an alias
  std::string repository;  // "team/app" ("library/ubuntu" on Docker Hub)
  std::string reference;   // manifests: tag or digest; blobs and referrers: the digest
  bool path_prefixed = false;  // the upstream came as the first path component

  [[nodiscard]] bool by_digest() const { return reference.starts_with("sha256:"); }
};

enum class RouteError { not_found, unknown_upstream, invalid };

struct RouteFailure {
  RouteError error = RouteError::not_found;
  std::string message;
};

// `upstreams` are the names requests may use (registries and aliases), in order; the first takes
// requests that name none.
[[nodiscard]] std::expected<Route, RouteFailure> parse_route(std::string_view path, const std::optional<std::string>& ns,
                                                             const std::vector<std::string>& upstreams);

}  // namespace hwimg::serve
