#pragma once
// NFD image-compatibility artifacts on a registry: one per variant, an OCI image manifest with
// artifactType, the empty config, one YAML layer and the variant as `subject`
// (docs/nfd.md#the-artifact); attached after a push, found again through the referrers.
//
//   auto attached = compat::attach_artifacts(client, destination, summary.digest);

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::compat {

// The empty descriptor's content (image-spec 1.1): the artifact's config.
inline constexpr std::string_view empty_config = "{}";

// The artifact manifest for `yaml` about `subject` (canonical JSON, no timestamp: same inputs,
// same digest, so a second push finds it listed and adds nothing).
[[nodiscard]] std::string artifact_manifest(const oci::Descriptor& subject, std::string_view yaml);

enum class CompatArtifacts { attach, skip };  // after a push (--no-compat: skip)

struct Attached {
  std::size_t artifacts = 0;
  std::uint64_t requests = 0;  // those of the workers' own clients
};

// Whether the push before put any manifest: an unchanged image likely has its artifacts already.
enum class Pushed { changed, unchanged };

// Attaches one artifact to every variant of the index (or to the single manifest) `root` names
// in `repository` that carries org.hwimg.* annotations, several at once (each worker a client made
// with `options`); after an unchanged push, only those not listed yet.
[[nodiscard]] Result<Attached> attach_artifacts(registry::Client& client, const registry::ClientOptions& options,
                                                const registry::Reference& repository, const oci::Digest& root,
                                                Pushed pushed = Pushed::changed);

// What a push does after its image is up: attaches the artifacts and counts them in `pushed`; a
// failure is a warning on `output` (the image itself is pushed), not an error.
void attach_after_push(registry::Client& client, const registry::ClientOptions& options,
                       const registry::Reference& destination, registry::PushSummary& pushed, util::Output& output);

}  // namespace hwimg::compat
