#pragma once
// Registry references in Docker's spelling, with Docker's normalisation (docker.io/library/...).

#include <optional>
#include <string>
#include <string_view>

#include "hwimg/oci/digest.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::registry {

struct Reference {
  std::string registry;    // "docker.io", "127.0.0.1:5443", "[::1]:5000" (host[:port] as written)
  std::string repository;  // "library/ubuntu", "team/app"
  std::string tag;         // empty when the text named none
  std::optional<oci::Digest> digest;

  // "registry/repository[:tag][@digest]", tag omitted when empty.
  [[nodiscard]] std::string str() const;
  // "registry/repository".
  [[nodiscard]] std::string name() const { return registry + "/" + repository; }
  // What goes after /manifests/: the digest when there is one, else the tag, else "latest".
  [[nodiscard]] std::string manifest_reference() const;
  // The host without port or IPv6 brackets ("127.0.0.1", "::1").
  [[nodiscard]] std::string host() const;
  // Same registry and repository, another tag, no digest.
  [[nodiscard]] Reference with_tag(std::string new_tag) const;
};

// Parses "[host[:port]/]path[:tag][@sha256:hex]" as Docker does; errors name the broken part.
[[nodiscard]] Result<Reference> parse_reference(std::string_view text);

// Checks a registry tag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}.
[[nodiscard]] Result<void> validate_registry_tag(std::string_view tag);

// True for localhost, 127.0.0.0/8 and ::1: registries Docker lets speak plain HTTP.
[[nodiscard]] bool is_loopback_host(std::string_view host);

}  // namespace hwimg::registry
