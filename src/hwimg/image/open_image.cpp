#include "hwimg/image/open_image.hpp"

#include "hwimg/image/layout_reader.hpp"
#include "hwimg/image/registry_reader.hpp"
#include "hwimg/oci/layout.hpp"

namespace hwimg::image {

Result<ImageReference> parse_image_reference(std::string_view text) {
  ImageReference reference;
  reference.text = std::string(text);
  if (oci::is_layout_reference(text)) {
    HWIMG_TRY_ASSIGN(auto layout, oci::parse_layout_reference(text));
    reference.kind = SourceKind::layout;
    reference.directory = std::move(layout.directory);
    reference.tag = std::move(layout.tag);
    reference.digest = layout.digest;
    return reference;
  }
  HWIMG_TRY_ASSIGN(reference.registry, registry::parse_reference(text));
  reference.kind = SourceKind::registry;
  reference.tag = reference.registry.tag;
  reference.digest = reference.registry.digest;
  return reference;
}

Result<OpenedImage> open_image(std::string_view text, const OpenOptions& options) {
  HWIMG_TRY_ASSIGN(auto reference, parse_image_reference(text));
  return open_image(std::move(reference), options);
}

Result<std::unique_ptr<ImageReader>> open_reader(const ImageReference& reference, const OpenOptions& options) {
  if (reference.kind == SourceKind::layout) {
    // Joined as written (not normalised), so messages show the path the user or recipe named.
    const auto& directory = reference.directory;
    const auto path = directory.is_absolute() || options.base_directory.empty() ? directory
                                                                                : options.base_directory / directory;
    return LayoutReader::open(path);
  }
  if (options.client != nullptr) return std::make_unique<RegistryReader>(*options.client, reference.registry);
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(options.registry));
  return std::make_unique<RegistryReader>(std::make_unique<registry::Client>(std::move(client)), reference.registry);
}

Result<OpenedImage> open_image(ImageReference reference, const OpenOptions& options) {
  OpenedImage image;
  HWIMG_TRY_ASSIGN(image.reader, open_reader(reference, options));
  HWIMG_TRY_ASSIGN(image.root, image.reader->resolve(reference.tag_or_digest()));
  image.reference = std::move(reference);
  return image;
}

}  // namespace hwimg::image
