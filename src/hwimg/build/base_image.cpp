#include "hwimg/build/base_image.hpp"

#include "hwimg/image/documents.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

namespace {

Result<void> verify_blob_file(const fs::path& path, const oci::Descriptor& descriptor) {
  HWIMG_TRY_ASSIGN(const auto actual, oci::digest_file(path.string()));
  if (actual.digest != descriptor.digest) {
    return fail("blob {} does not match its digest (content hashes to {})", descriptor.digest.str(),
                actual.digest.str());
  }
  if (actual.size != descriptor.size) {
    return fail("blob {} is {} bytes, its descriptor says {}", descriptor.digest.str(), actual.size, descriptor.size);
  }
  return {};
}

Result<oci::Descriptor> pick_platform(image::ImageReader& reader, const oci::Descriptor& index_descriptor,
                                      const oci::Platform& platform) {
  HWIMG_TRY_ASSIGN(const auto images, image::list_images(reader, index_descriptor));
  for (const auto& d : images) {
    if (d.platform && d.platform->os == platform.os && d.platform->architecture == platform.architecture) {
      return d;
    }
  }
  return fail("it has no image for {}/{}", platform.os, platform.architecture);
}

Result<BaseImage> open_base(const VariantPlan& plan, const fs::path& recipe_directory) {
  BaseImage base;
  base.reference = plan.base_text;
  if (plan.base->kind == image::SourceKind::registry) {
    return fail("registry base images are not supported by `hwimg build` yet; copy it into a layout first "
                "(skopeo copy docker://{} oci:DIR:TAG) and use oci:DIR:TAG",
                plan.base_text);
  }
  HWIMG_TRY_ASSIGN(auto opened, image::open_image(*plan.base, {.registry = {}, .base_directory = recipe_directory}));
  auto& reader = *opened.reader;
  auto descriptor = opened.root;
  if (oci::media_type::is_index(descriptor.media_type)) {
    HWIMG_TRY_ASSIGN(descriptor, pick_platform(reader, descriptor, plan.variant->platform));
  }
  HWIMG_TRY_ASSIGN(auto manifest, image::read_manifest(reader, descriptor));
  HWIMG_TRY_ASSIGN(base.config, image::read_config(reader, manifest));
  if (base.config.diff_ids.size() != manifest.layers.size()) {
    return fail("its config lists {} layers, its manifest {}", base.config.diff_ids.size(), manifest.layers.size());
  }
  for (const auto& layer : manifest.layers) {
    const auto file = reader.local_blob(layer.digest);
    if (!file) return fail("layer {} is not on this machine", layer.digest.str());
    HWIMG_TRY(verify_blob_file(*file, layer));
  }
  base.reader = std::move(opened.reader);
  base.manifest_descriptor = descriptor;
  base.layers = std::move(manifest.layers);
  return base;
}

}  // namespace

Result<BaseImage> resolve_base(const VariantPlan& plan, const fs::path& recipe_directory) {
  if (!plan.base) return BaseImage{plan.base_text, nullptr, {}, {}, {}};
  return with_context(open_base(plan, recipe_directory), "failed to use base image " + plan.base_text);
}

Result<void> import_base_layers(const BaseImage& base, const oci::Layout& target) {
  if (base.is_scratch()) {
    return {};
  }
  for (const auto& layer : base.layers) {
    if (target.has_blob(layer.digest)) continue;
    const auto source = *base.reader->local_blob(layer.digest);
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
