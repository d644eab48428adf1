#include "hwimg/serve/route.hpp"

#include <algorithm>

#include "hwimg/oci/digest.hpp"
#include "hwimg/registry/reference.hpp"

namespace hwimg::serve {
namespace {

std::unexpected<RouteFailure> refuse(RouteError error, std::string message) {
  return std::unexpected(RouteFailure{error, std::move(message)});
}

// As Docker reads a reference: a first component with a dot or a colon, or "localhost", is a host.
bool looks_like_host(std::string_view component) {
  return component.find_first_of(".:") != std::string_view::npos || component == "localhost";
}

bool configured(const std::vector<std::string>& upstreams, std::string_view name) {
  return std::ranges::find(upstreams, name) != upstreams.end();
}

std::unexpected<RouteFailure> unknown_upstream(std::string_view name) {
  return refuse(RouteError::unknown_upstream,
                fmt::format("upstream {} is not configured (hwimg serve mirrors only its --upstream registries)", name));
}

struct Split {
  RouteKind kind;
  std::string_view name;
  std::string_view reference;
};

std::optional<Split> split_api_path(std::string_view rest) {
  if (rest.ends_with("/tags/list")) return Split{RouteKind::tags, rest.substr(0, rest.size() - 10), {}};
  for (const auto& [marker, kind] : {std::pair{std::string_view("/manifests/"), RouteKind::manifest},
                                     std::pair{std::string_view("/blobs/"), RouteKind::blob},
                                     std::pair{std::string_view("/referrers/"), RouteKind::referrers}}) {
    const auto at = rest.rfind(marker);
    if (at != std::string_view::npos && at > 0) return Split{kind, rest.substr(0, at), rest.substr(at + marker.size())};
  }
  return std::nullopt;
}

}  // namespace

std::expected<Route, RouteFailure> parse_route(std::string_view path, const std::optional<std::string>& ns,
                                               const std::vector<std::string>& upstreams) {
  if (path == "/v2" || path == "/v2/") return Route{};
  if (!path.starts_with("/v2/")) return refuse(RouteError::not_found, fmt::format("{} is not a registry API path", path));
  const auto split = split_api_path(path.substr(4));
  if (!split || split->name.empty()) {
    return refuse(RouteError::not_found, fmt::format("{} is not a path of the registry API's read side", path));
  }
  Route route;
  route.kind = split->kind;
  route.reference = std::string(split->reference);
  std::string_view name = split->name;
  const auto first = name.substr(0, name.find('/'));
  const bool has_more = name.find('/') != std::string_view::npos;
  if (ns) {
    if (!configured(upstreams, *ns)) return unknown_upstream(*ns);
    route.upstream = *ns;
    if (has_more && first == *ns) {
      name.remove_prefix(first.size() + 1);
      route.path_prefixed = true;
    }
  } else if (has_more && configured(upstreams, first)) {
    route.upstream = std::string(first);
    name.remove_prefix(first.size() + 1);
    route.path_prefixed = true;
  } else if (has_more && looks_like_host(first)) {
    return unknown_upstream(first);
  } else {
    if (upstreams.empty()) return unknown_upstream("(none)");
    route.upstream = upstreams.front();
  }
  route.repository = std::string(name);
  if (route.upstream == "docker.io" && route.repository.find('/') == std::string::npos) {
    route.repository = "library/" + route.repository;
  }

  // The registry reference grammar checks the repository, and the tag or digest, in one place.
  auto text = route.upstream + "/" + route.repository;
  if (route.kind == RouteKind::manifest) {
    text += (route.by_digest() ? "@" : ":") + route.reference;
  } else if (route.kind == RouteKind::blob || route.kind == RouteKind::referrers) {
    if (auto digest = oci::Digest::parse(route.reference); !digest) {
      return refuse(RouteError::invalid, fmt::format("invalid digest \"{}\": {}", route.reference,
                                                     digest.error().message));
    }
  }
  if (auto parsed = registry::parse_reference(text); !parsed) {
    return refuse(RouteError::invalid, parsed.error().message);
  }
  return route;
}

}  // namespace hwimg::serve
