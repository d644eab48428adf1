#pragma once
// Finding the NFD artifacts of an image again, in a registry or a layout: for each variant (or
// one), the newest artifact of NFD's type among its referrers, and its YAML as stored
// (docs/nfd.md#compat-show).

#include <optional>
#include <string>
#include <vector>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/image/reader.hpp"

namespace hwimg::compat {

struct FoundArtifact {
  std::string variant;       // org.hwimg.variant, else the manifest's digest
  oci::Descriptor subject;   // the variant manifest
  oci::Descriptor artifact;  // the artifact manifest
  std::string yaml;          // its layer, byte for byte
};

// Every variant of the index `root` (or that manifest) in `reader`, or only `variant`; a variant
// without an artifact is an error. Of several artifacts the last listed wins, as NFD picks it
// when none carries a creation time. `name` is the reference as the user wrote it.
[[nodiscard]] Result<std::vector<FoundArtifact>> find_artifacts(image::ImageReader& reader, const oci::Descriptor& root,
                                                                const std::string& name,
                                                                const std::optional<std::string>& variant);

// The artifacts as JSON: [{"variant", "subject", "artifact", "yaml"}], with a final newline.
[[nodiscard]] std::string artifacts_json(const std::vector<FoundArtifact>& artifacts);
// The YAML alone for one artifact; several as a YAML stream, each document headed by a comment.
[[nodiscard]] std::string artifacts_yaml(const std::vector<FoundArtifact>& artifacts);

}  // namespace hwimg::compat
