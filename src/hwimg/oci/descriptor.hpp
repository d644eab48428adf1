#pragma once
// Descriptors and platforms: how one OCI object points at another.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "hwimg/oci/digest.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::oci {

using Annotations = std::map<std::string, std::string>;

inline constexpr std::string_view ref_name_annotation = "org.opencontainers.image.ref.name";

struct Platform {
  std::string os;
  std::string architecture;
  std::string variant;  // empty: none (the amd64 baseline is written without one)

  auto operator<=>(const Platform&) const = default;
  // "linux/amd64/v3", as people and `--platform` flags spell it.
  [[nodiscard]] std::string str() const;
};

struct Descriptor {
  std::string media_type;
  Digest digest;
  std::int64_t size = 0;
  std::optional<Platform> platform;
  Annotations annotations;
  std::string artifact_type{};  // empty: none (image-spec 1.1, the referrers of a manifest)

  bool operator==(const Descriptor&) const = default;

  [[nodiscard]] std::optional<std::string> annotation(std::string_view key) const;
  [[nodiscard]] std::optional<std::string> ref_name() const { return annotation(ref_name_annotation); }
};

// Indexes and manifests larger than this are refused (the distribution registry's own limit).
inline constexpr std::size_t max_manifest_size = std::size_t{4} << 20;
// Image configs are small; this bounds what a hostile source can make us hold.
inline constexpr std::size_t max_config_size = std::size_t{16} << 20;

// The largest document `descriptor` may name in memory: an index or manifest, else a config.
[[nodiscard]] std::size_t document_limit(const Descriptor& descriptor);

// Checks bytes read for `descriptor` from `source` against its size and digest.
[[nodiscard]] Result<void> verify_content(const Descriptor& descriptor, std::string_view bytes,
                                          std::string_view source);

}  // namespace hwimg::oci
