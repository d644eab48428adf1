#include "hwimg/select/image_source.hpp"

#include "hwimg/image/documents.hpp"

namespace hwimg::select {

Result<std::vector<Candidate>> read_candidates(image::ImageReader& reader, const oci::Descriptor& root) {
  HWIMG_TRY_ASSIGN(const auto images, image::list_images(reader, root));
  std::vector<Candidate> candidates;
  for (const auto& descriptor : images) {
    Candidate candidate{descriptor, std::nullopt};
    if (needs_config(descriptor)) {
      HWIMG_TRY_ASSIGN(const auto manifest, image::read_manifest(reader, descriptor));
      // A single-manifest image keeps hwimg's pairs in the manifest's own annotations.
      candidate.descriptor.annotations.insert(manifest.annotations.begin(), manifest.annotations.end());
      HWIMG_TRY_ASSIGN(const auto config, image::read_config(reader, manifest));
      candidate.config = ConfigFacts{{config.os, config.architecture, config.variant}, config.env, config.labels};
    }
    candidates.push_back(std::move(candidate));
  }
  return candidates;
}

Result<ImageSource> load_image_source(std::string_view reference, const image::OpenOptions& options) {
  ImageSource source;
  HWIMG_TRY_ASSIGN(source.image, image::open_image(reference, options));
  HWIMG_TRY_ASSIGN(source.candidates, read_candidates(*source.image.reader, source.image.root));
  return source;
}

std::string variant_reference(const ImageSource& source, const Candidate& candidate, std::string_view variant_id) {
  return source.image.reader->pinned_reference(candidate.descriptor.digest, source.tag() + "-" + std::string(variant_id));
}

}  // namespace hwimg::select
