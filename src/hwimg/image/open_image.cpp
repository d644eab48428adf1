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

std::optional<std::string> layout_written_bare(std::string_view text) {
  if (text.empty() || oci::is_layout_reference(text)) return std::nullopt;
  std::error_code ec;
  const auto is_layout = [&](std::string_view directory) {
    return !directory.empty() && std::filesystem::is_regular_file(std::filesystem::path(directory) / "oci-layout", ec);
  };
  const auto slash = text.rfind('/');
  const auto colon = text.rfind(':');
  const bool has_tag = colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash);
  if (is_layout(text) || (has_tag && is_layout(text.substr(0, colon)))) return "oci:" + std::string(text);
  return std::nullopt;
}

Result<ImageReference> parse_command_line_reference(std::string_view text) {
  auto reference = parse_image_reference(text);
  const auto layout = layout_written_bare(text);
  if (!layout) return reference;
  if (!reference) {
    return fail("failed to parse reference \"{}\": that is an image layout on this machine; write {}", text, *layout);
  }
  // Not oci:, so a registry reference. Docker's spelling puts a name without a registry on
  // docker.io; one that names its registry is no layout's name, whatever the working directory holds.
  const auto& registry = reference->registry.registry;
  if (registry == "docker.io" && !text.starts_with("docker.io/") && !text.starts_with("index.docker.io/")) {
    return fail("failed to parse reference \"{}\": it names an image layout on this machine and an image on Docker "
                "Hub; write {} for the layout or docker.io/{} for Docker Hub",
                text, *layout, reference->registry.str().substr(registry.size() + 1));
  }
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
