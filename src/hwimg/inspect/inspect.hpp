#pragma once
// `hwimg inspect`: an image index, its variants with platform and annotations, layers and sizes.

#include <string>
#include <vector>

#include "hwimg/image/reader.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/verify/image_verify.hpp"

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

// Reads the index (or manifest) `root` and every variant manifest; no config or layer.
[[nodiscard]] Result<ImageView> load_image_view(std::string reference, image::ImageReader& reader,
                                                const oci::Descriptor& root);
// With `verification` (inspect --verify), what each variant's code needs follows.
[[nodiscard]] std::string render(const ImageView& view, Format format,
                                 const std::vector<verify::VariantVerification>* verification = nullptr);

}  // namespace hwimg::inspect
