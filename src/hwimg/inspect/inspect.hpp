#pragma once
// `hwimg inspect`: an image index, its variants with platform and annotations, layers and sizes.

#include <functional>
#include <string>
#include <vector>

#include "hwimg/oci/documents.hpp"

namespace hwimg::inspect {

enum class Format { table, json };

struct VariantView {
  oci::Descriptor manifest;   // as listed in the index (platform, annotations)
  oci::Descriptor config;
  std::vector<oci::Descriptor> layers;
};

struct ImageView {
  std::string reference;
  oci::Descriptor root;       // the index, or the only manifest
  oci::Annotations annotations;
  std::vector<VariantView> variants;
};

// Reads a blob (manifest, index) named by a descriptor, verifying it.
using BlobReader = std::function<Result<std::string>(const oci::Descriptor&)>;

[[nodiscard]] Result<ImageView> load_image_view(const std::string& reference, const oci::Descriptor& root,
                                                const BlobReader& read);
[[nodiscard]] std::string render(const ImageView& view, Format format);

// Entry point of the command: a layout reference (oci:DIR[:TAG]).
[[nodiscard]] Result<int> run_inspect(const std::string& reference, Format format);

}  // namespace hwimg::inspect
