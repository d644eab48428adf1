#pragma once
// The image a recipe builds on: nothing ("scratch") or a variant of another image, whose layers
// are reused by digest, never re-packed.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hwimg/build/variant_plan.hpp"
#include "hwimg/image/reader.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/layout.hpp"

namespace hwimg::build {

struct BaseImage {
  std::string reference;                        // as the plan names it, for messages and annotations
  std::unique_ptr<image::ImageReader> reader;   // empty for scratch
  oci::Descriptor manifest_descriptor;
  oci::ImageConfig config;
  std::vector<oci::Descriptor> layers;

  [[nodiscard]] bool is_scratch() const { return reader == nullptr; }
};

// Resolves the plan's base for its variant's platform and verifies the digest of every blob it
// will reuse. A relative layout directory is relative to `recipe_directory`.
[[nodiscard]] Result<BaseImage> resolve_base(const VariantPlan& plan, const std::filesystem::path& recipe_directory);

// Puts the base's layer blobs into `target` (a hard link where possible, else a copy).
[[nodiscard]] Result<void> import_base_layers(const BaseImage& base, const oci::Layout& target);

}  // namespace hwimg::build
