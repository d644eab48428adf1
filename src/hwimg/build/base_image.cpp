#include "hwimg/build/base_image.hpp"

#include "hwimg/util/files.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

namespace {

Result<void> verify_blob_file(const oci::Layout& layout, const oci::Descriptor& descriptor) {
  auto actual = oci::digest_file(layout.blob_path(descriptor.digest).string());
  if (!actual) return std::unexpected(actual.error());
  if (actual->digest != descriptor.digest) {
    return fail("blob {} does not match its digest (content hashes to {})", descriptor.digest.str(),
                actual->digest.str());
  }
  if (actual->size != descriptor.size) {
    return fail("blob {} is {} bytes, its descriptor says {}", descriptor.digest.str(), actual->size, descriptor.size);
  }
  return {};
}

Result<oci::Descriptor> pick_platform(const oci::Layout& layout, const oci::Descriptor& index_descriptor,
                                      const oci::Platform& platform) {
  auto bytes = layout.read_blob(index_descriptor);
  if (!bytes) return std::unexpected(bytes.error());
  auto index = oci::parse_index(*bytes);
  if (!index) return std::unexpected(index.error());
  for (const auto& d : index->manifests) {
    if (d.platform && d.platform->os == platform.os && d.platform->architecture == platform.architecture &&
        oci::media_type::is_manifest(d.media_type)) {
      return d;
    }
  }
  return fail("it has no image for {}/{}", platform.os, platform.architecture);
}

}  // namespace

Result<BaseImage> resolve_base(const std::string& reference, const recipe::Recipe& recipe,
                               const oci::Platform& platform) {
  BaseImage base;
  base.reference = reference;
  if (reference == "scratch") {
    return base;
  }
  const auto context = fmt::format("failed to use base image {}", reference);
  if (!oci::is_layout_reference(reference)) {
    return fail("{}: registry base images are not supported by `hwimg build` yet; copy it into a layout first "
                "(skopeo copy docker://{} oci:DIR:TAG) and use oci:DIR:TAG",
                context, reference);
  }
  auto parsed = oci::parse_layout_reference(reference);
  if (!parsed) return std::unexpected(parsed.error().context(context));
  // Joined as written (not normalised), so messages show the path the recipe names.
  const auto& directory = parsed->directory;
  auto layout = oci::Layout::open(directory.is_absolute() ? directory : recipe.directory() / directory);
  if (!layout) return std::unexpected(layout.error().context(context));
  auto descriptor = layout->resolve(parsed->tag);
  if (!descriptor) return std::unexpected(descriptor.error().context(context));
  if (oci::media_type::is_index(descriptor->media_type)) {
    descriptor = pick_platform(*layout, *descriptor, platform);
    if (!descriptor) return std::unexpected(descriptor.error().context(context));
  }
  auto manifest_bytes = layout->read_blob(*descriptor);
  if (!manifest_bytes) return std::unexpected(manifest_bytes.error().context(context));
  auto manifest = oci::parse_manifest(*manifest_bytes);
  if (!manifest) return std::unexpected(manifest.error().context(context));
  auto config_bytes = layout->read_blob(manifest->config);
  if (!config_bytes) return std::unexpected(config_bytes.error().context(context));
  auto config = oci::parse_image_config(*config_bytes);
  if (!config) return std::unexpected(config.error().context(context));
  if (config->diff_ids.size() != manifest->layers.size()) {
    return fail("{}: its config lists {} layers, its manifest {}", context, config->diff_ids.size(),
                manifest->layers.size());
  }
  for (const auto& layer : manifest->layers) {
    if (auto r = verify_blob_file(*layout, layer); !r) return std::unexpected(r.error().context(context));
  }
  base.layout = std::move(*layout);
  base.manifest_descriptor = *descriptor;
  base.config = std::move(*config);
  base.layers = std::move(manifest->layers);
  return base;
}

Result<void> import_base_layers(const BaseImage& base, const oci::Layout& target) {
  if (!base.layout) {
    return {};
  }
  for (const auto& layer : base.layers) {
    if (target.has_blob(layer.digest)) continue;
    const auto source = base.layout->blob_path(layer.digest);
    const auto temporary = target.temporary_file("base-layer");
    std::error_code ec;
    fs::create_hard_link(source, temporary, ec);
    if (ec) {
      fs::copy_file(source, temporary, ec);
      if (ec) {
        return fail("failed to copy base layer {}: {}", layer.digest.str(), ec.message());
      }
    }
    HWIMG_TRY(target.adopt_blob(temporary, layer.digest));
  }
  return {};
}

}  // namespace hwimg::build
