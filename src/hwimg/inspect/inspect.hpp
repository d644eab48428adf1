#pragma once
// `hwimg inspect`: an image index, its variants with their tags, platform and annotations, config,
// layers and sizes, and the referrers attached to each.

#include <optional>
#include <string>
#include <string_view>
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
  std::vector<std::string> tags;                 // the source's tags naming this manifest (variant_tags.hpp)
  std::optional<oci::ImageConfig> image_config;  // none when the config is not an image config
  std::vector<oci::Descriptor> referrers;        // attached to this manifest (attached_referrers.hpp)
};

struct ImageView {
  std::string reference;
  std::string source;         // "oci:DIR" or "registry/repo", which a tag or digest completes
  oci::Descriptor root;       // the index, or the only manifest
  oci::Annotations annotations;
  std::vector<VariantView> variants;
  std::vector<oci::Descriptor> referrers;  // attached to the index (a lone manifest's are its variant's)
  // Why the tags or the referrers could not be listed; the rest of the view stands without them.
  std::optional<std::string> tags_problem;
  std::optional<std::string> referrers_problem;

  // "tags not listed: ...", "referrers not listed: ...".
  [[nodiscard]] std::vector<std::string> notes() const;
};

// Reads the index (or manifest) `root` named by `tag` ("" when by digest), every variant manifest
// and image config, up to one page of the source's tags and the referrers of the root and the
// variants; no layer.
[[nodiscard]] Result<ImageView> load_image_view(std::string reference, std::string_view tag,
                                                image::ImageReader& reader, const oci::Descriptor& root);
// With `verification` (inspect --verify), what each variant's code needs follows.
[[nodiscard]] std::string render(const ImageView& view, Format format,
                                 const std::vector<verify::VariantVerification>* verification = nullptr);

}  // namespace hwimg::inspect
