#pragma once
// NFD image-compatibility artifacts on a registry: one per variant, an OCI image manifest with
// artifactType, the empty config, one YAML layer and the variant as `subject`
// (docs/nfd.md#the-artifact); attached after a push, found again through the referrers.
//
//   auto attached = compat::attach_artifacts(client, destination, summary.digest);

#include <cstddef>
#include <string>
#include <string_view>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/registry/client.hpp"

namespace hwimg::compat {

// The empty descriptor's content (image-spec 1.1): the artifact's config.
inline constexpr std::string_view empty_config = "{}";

// The artifact manifest for `yaml` about `subject` (canonical JSON, no timestamp: same inputs,
// same digest, so a second push finds it listed and adds nothing).
[[nodiscard]] std::string artifact_manifest(const oci::Descriptor& subject, std::string_view yaml);

// Attaches one artifact to every variant of the index (or to the single manifest) `root` names
// in `repository` that carries org.hwimg.* annotations; returns how many are attached.
[[nodiscard]] Result<std::size_t> attach_artifacts(registry::Client& client, const registry::Reference& repository,
                                                   const oci::Digest& root);

}  // namespace hwimg::compat
