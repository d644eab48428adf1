#pragma once
// The annotation contract between the builder and every reader (docs/selection.md#annotations):
// the org.hwimg.* keys a variant carries, the OCI keys hwimg writes, and where a reader finds them.

#include <string_view>

#include "hwimg/oci/descriptor.hpp"

namespace hwimg::oci::annotation {

inline constexpr std::string_view hwimg_prefix = "org.hwimg.";
inline constexpr std::string_view variant = "org.hwimg.variant";
inline constexpr std::string_view cuda_version = "org.hwimg.cuda.version";
inline constexpr std::string_view gpu_targets = "org.hwimg.gpu.targets";
inline constexpr std::string_view cpu_level = "org.hwimg.cpu.level";
inline constexpr std::string_view cpu_target = "org.hwimg.cpu.target";
inline constexpr std::string_view cpu_features = "org.hwimg.cpu.features";
inline constexpr std::string_view driver_bundled = "org.hwimg.driver.bundled";

inline constexpr std::string_view created = "org.opencontainers.image.created";
inline constexpr std::string_view base_prefix = "org.opencontainers.image.base.";
inline constexpr std::string_view base_name = "org.opencontainers.image.base.name";
inline constexpr std::string_view base_digest = "org.opencontainers.image.base.digest";

// True when any key starts with org.hwimg.
[[nodiscard]] bool has_hwimg_pairs(const Annotations& annotations);
// The org.hwimg.* pairs of `annotations`.
[[nodiscard]] Annotations hwimg_pairs(const Annotations& annotations);

// Where a variant's org.hwimg.* pairs are: the builder writes them on the manifest (its index
// descriptor and the manifest itself) and as config labels; an image built by other tools (a
// Dockerfile LABEL) has them only as labels. The manifest's win whenever it has any.
[[nodiscard]] const Annotations& variant_pairs_source(const Annotations& manifest, const Annotations& labels);

}  // namespace hwimg::oci::annotation
