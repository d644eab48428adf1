#pragma once
// `hwimg index create`: one multi-variant index from variant manifests pushed by separate CI jobs,
// written exactly as `hwimg build` writes it, so both give the same index digest. commands reads
// the variants from the registry and pushes the index.
//
//   hwimg index create reg/app:1.0 --from reg/app:1.0-cpu-x86-64-v1 --from reg/app@sha256:...

#include <string>
#include <string_view>
#include <vector>

#include "hwimg/image/reader.hpp"
#include "hwimg/oci/documents.hpp"

namespace hwimg::build {

// A manifest's bytes exactly as served, and the media type and digest they were served under.
struct ServedManifest {
  std::string bytes;
  std::string media_type;
  oci::Digest digest;
};

// One variant as read from the registry: its manifest and the bytes of its image config.
struct VariantSource {
  std::string reference;  // as the user wrote it, for messages
  ServedManifest manifest;
  std::string config;
};

// The manifest `tag_or_digest` names, read through `reader`, and its config unless it is an index
// (which assemble_index refuses). Errors name `reference`.
[[nodiscard]] Result<VariantSource> read_variant_source(image::ImageReader& reader, const std::string& reference,
                                                        std::string_view tag_or_digest);

// The index `hwimg build` would write for these variants, in this order: each descriptor gets the
// config's os/architecture/variant and its org.hwimg.* labels; the index gets the annotations
// every manifest carries with the same value, except the per-variant org.hwimg.* and
// org.opencontainers.image.base.* ones (created, title, ... as the recipe set them).
// Errors name the reference: an index, no org.hwimg.variant label, a variant id seen twice.
[[nodiscard]] Result<oci::Index> assemble_index(const std::vector<VariantSource>& variants);

}  // namespace hwimg::build
