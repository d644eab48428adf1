#pragma once
// Finding the NFD artifacts of an image again: for each variant (or one), the newest artifact of
// NFD's type among its referrers, and its YAML as stored (docs/nfd.md#compat-show).

#include <optional>
#include <string>
#include <vector>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/registry/client.hpp"

namespace hwimg::compat {

struct FoundArtifact {
  std::string variant;       // org.hwimg.variant, else the manifest's digest
  oci::Descriptor subject;   // the variant manifest
  oci::Descriptor artifact;  // the artifact manifest
  std::string yaml;          // its layer, byte for byte
};

// Every variant of the index `reference` names (or that manifest), or only `variant`; a variant
// without an artifact is an error. Of several artifacts the last listed wins, as NFD picks it
// when none carries a creation time.
[[nodiscard]] Result<std::vector<FoundArtifact>> find_artifacts(registry::Client& client,
                                                                const registry::Reference& reference,
                                                                const std::optional<std::string>& variant);

// The artifacts as JSON: [{"variant", "subject", "artifact", "yaml"}], with a final newline.
[[nodiscard]] std::string artifacts_json(const std::vector<FoundArtifact>& artifacts);
// The YAML alone for one artifact; several as a YAML stream, each document headed by a comment.
[[nodiscard]] std::string artifacts_yaml(const std::vector<FoundArtifact>& artifacts);

}  // namespace hwimg::compat
