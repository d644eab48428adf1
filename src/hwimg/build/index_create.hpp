#pragma once
// `hwimg index create`: one multi-variant index from variant manifests pushed by separate CI jobs,
// written exactly as `hwimg build` writes it, so both give the same index digest.
//
//   hwimg index create reg/app:1.0 --from reg/app:1.0-cpu-x86-64-v1 --from reg/app@sha256:...

#include <string>
#include <vector>

#include "hwimg/oci/documents.hpp"
#include "hwimg/registry/client.hpp"

namespace hwimg::build {

// One variant as read from the registry: its manifest and the bytes of its image config.
struct VariantSource {
  std::string reference;  // as the user wrote it, for messages
  registry::FetchedManifest manifest;
  std::string config;
};

// The index `hwimg build` would write for these variants, in this order: each descriptor gets the
// config's os/architecture/variant and its org.hwimg.* labels; the index gets the annotations
// every manifest carries with the same value, except the per-variant org.hwimg.* and
// org.opencontainers.image.base.* ones (created, title, ... as the recipe set them).
// Errors name the reference: an index, no org.hwimg.variant label, a variant id seen twice.
[[nodiscard]] Result<oci::Index> assemble_index(const std::vector<VariantSource>& variants);

// Reads every source (same registry and repository as `destination`, since a registry accepts an
// index only when its children are in the index's repository), PUTs the index under
// destination's tag and returns its digest.
[[nodiscard]] Result<oci::Digest> create_index(registry::Client& client, const registry::Reference& destination,
                                               const std::vector<registry::Reference>& sources);

}  // namespace hwimg::build
