#pragma once
// Walking an image through a reader: index -> manifests -> config, each parsed and verified.

#include <vector>

#include "hwimg/image/reader.hpp"
#include "hwimg/oci/documents.hpp"

namespace hwimg::image {

[[nodiscard]] Result<oci::Index> read_index(ImageReader& reader, const oci::Descriptor& descriptor);
[[nodiscard]] Result<oci::Manifest> read_manifest(ImageReader& reader, const oci::Descriptor& descriptor);
[[nodiscard]] Result<oci::ImageConfig> read_config(ImageReader& reader, const oci::Manifest& manifest);

// The images an index lists (its manifests; nested indexes and artifacts are not images), or the
// root itself when it is a manifest. `index_annotations` gets the index's annotations, if any.
[[nodiscard]] Result<std::vector<oci::Descriptor>> list_images(ImageReader& reader, const oci::Descriptor& root,
                                                               oci::Annotations* index_annotations = nullptr);

}  // namespace hwimg::image
