#pragma once
// The image a recipe builds on: nothing ("scratch") or a variant of an image in an OCI layout,
// whose layers are reused by digest, never re-packed.

#include <optional>
#include <string>
#include <vector>

#include "hwimg/oci/layout.hpp"
#include "hwimg/recipe/recipe.hpp"

namespace hwimg::build {

struct BaseImage {
  std::string reference;               // as written in the recipe, for messages and annotations
  std::optional<oci::Layout> layout;   // empty for scratch
  oci::Descriptor manifest_descriptor;
  oci::ImageConfig config;
  std::vector<oci::Descriptor> layers;
};

// Resolves `reference` and verifies the digest of every blob it will reuse.
// A relative layout directory is relative to the recipe.
[[nodiscard]] Result<BaseImage> resolve_base(const std::string& reference, const recipe::Recipe& recipe,
                                             const oci::Platform& platform);

// Puts the base's layer blobs into `target` (a hard link where possible, else a copy).
[[nodiscard]] Result<void> import_base_layers(const BaseImage& base, const oci::Layout& target);

}  // namespace hwimg::build
