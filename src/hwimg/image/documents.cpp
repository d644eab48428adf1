#include "hwimg/image/documents.hpp"

namespace hwimg::image {

Result<oci::Index> read_index(ImageReader& reader, const oci::Descriptor& descriptor) {
  HWIMG_TRY_ASSIGN(const auto bytes, reader.read(descriptor));
  return with_context(oci::parse_index(bytes), "failed to read image index " + descriptor.digest.str());
}

Result<oci::Manifest> read_manifest(ImageReader& reader, const oci::Descriptor& descriptor) {
  HWIMG_TRY_ASSIGN(const auto bytes, reader.read(descriptor));
  return with_context(oci::parse_manifest(bytes), "failed to read manifest " + descriptor.digest.str());
}

Result<oci::ImageConfig> read_config(ImageReader& reader, const oci::Manifest& manifest) {
  HWIMG_TRY_ASSIGN(const auto bytes, reader.read(manifest.config));
  return with_context(oci::parse_image_config(bytes), "failed to read image config " + manifest.config.digest.str());
}

Result<std::vector<oci::Descriptor>> list_images(ImageReader& reader, const oci::Descriptor& root,
                                                 oci::Annotations* index_annotations) {
  if (!oci::media_type::is_index(root.media_type)) return std::vector<oci::Descriptor>{root};
  HWIMG_TRY_ASSIGN(auto index, read_index(reader, root));
  if (index_annotations != nullptr) *index_annotations = index.annotations;
  std::vector<oci::Descriptor> images;
  for (auto& descriptor : index.manifests) {
    if (oci::media_type::is_manifest(descriptor.media_type)) images.push_back(std::move(descriptor));
  }
  return images;
}

}  // namespace hwimg::image
