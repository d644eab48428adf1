#include "hwimg/build/base_image.hpp"

#include <mutex>

#include "hwimg/hw/cpu_levels.hpp"
#include "hwimg/image/cached_reader.hpp"
#include "hwimg/image/documents.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

// An opened base image source: its reader is used by one thread at a time.
struct BaseResolver::Source {
  image::OpenedImage image;
  std::mutex mutex;
};

namespace {

Result<void> verify_blob_file(const fs::path& path, const oci::Descriptor& descriptor) {
  // Never more bytes hashed than the descriptor says: a size that differs fails before reading.
  std::error_code ec;
  if (const auto size = fs::file_size(path, ec); !ec && size != static_cast<std::uintmax_t>(descriptor.size)) {
    return fail("blob {} is {} bytes, its descriptor says {}", descriptor.digest.str(), size, descriptor.size);
  }
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

// amd64 levels as numbers: the entry without a variant is the baseline.
int amd64_level(const std::string& variant) {
  if (variant.empty()) return 1;
  const auto level = hw::x86_level_from_oci_variant(variant);
  return level ? static_cast<int>(*level) : 0;
}

// Docker's canonical spelling of a registry reference, ":latest" when it names no tag or digest
// (what BuildKit records); a layout as it was written.
std::string qualified_name(const image::ImageReference& reference) {
  if (reference.kind != image::SourceKind::registry) return reference.text;
  if (reference.registry.tag.empty() && !reference.registry.digest) return reference.registry.with_tag("latest").str();
  return reference.registry.str();
}

std::string_view role_name(ImageRole role) {
  return role == ImageRole::base ? "base" : "builder";
}

// A single-platform image says what it is only in its config; one without os or architecture
// (some hand-made images) is taken as it is.
Result<void> check_config_platform(const oci::ImageConfig& config, const oci::Platform& platform) {
  if (config.os.empty() || config.architecture.empty()) return {};
  const oci::Platform own{config.os, config.architecture, config.variant};
  oci::Descriptor entry;
  entry.platform = own;
  if (pick_platform({entry}, platform)) return {};
  return fail("it is an image for {} (its config says so), not {}", own.str(), platform.str());
}

}  // namespace

Result<oci::Descriptor> pick_platform(const std::vector<oci::Descriptor>& images, const oci::Platform& platform) {
  const oci::Descriptor* best = nullptr;
  int best_level = 0;
  std::vector<std::string> available;
  for (const auto& d : images) {
    if (!d.platform) continue;
    available.push_back(d.platform->str());
    if (d.platform->os != platform.os || d.platform->architecture != platform.architecture) continue;
    if (platform.architecture != "amd64") {
      if (best == nullptr || d.platform->variant == platform.variant) best = &d;
      continue;
    }
    const int level = amd64_level(d.platform->variant);
    if (level > 0 && level <= amd64_level(platform.variant) && level > best_level) {
      best = &d;
      best_level = level;
    }
  }
  if (best != nullptr) return *best;
  return fail("it has no image for {}; it has {}", platform.str(),
              available.empty() ? std::string("no platform entries") : util::join(available, ", "));
}

BaseResolver::BaseResolver(fs::path recipe_directory, image::OpenOptions options,
                           std::function<Result<image::BlobCache*>()> open_cache)
    : m_recipe_directory(std::move(recipe_directory)), m_options(std::move(options)),
      m_open_cache(std::move(open_cache)) {
  m_options.base_directory = m_recipe_directory;
}

Result<std::shared_ptr<BaseResolver::Source>> BaseResolver::source_for(const image::ImageReference& reference) {
  // Opening asks the registry, so it runs outside any lock: different bases open at once.
  return m_sources.get(reference.text, [&]() -> Result<std::shared_ptr<Source>> {
    auto source = std::make_shared<Source>();
    HWIMG_TRY_ASSIGN(source->image, image::open_image(reference, m_options));
    if (reference.kind == image::SourceKind::registry) {
      HWIMG_TRY_ASSIGN(auto* cache, m_open_cache());
      source->image.reader = std::make_unique<image::CachedReader>(std::move(source->image.reader), *cache);
    }
    return source;
  });
}

Result<std::shared_ptr<const BaseImage>> BaseResolver::resolve(const VariantPlan& plan) {
  if (!plan.base) {
    auto scratch = std::make_shared<BaseImage>();
    scratch->reference = plan.base_text;
    scratch->name = plan.base_text;
    return std::shared_ptr<const BaseImage>(std::move(scratch));
  }
  return resolve(*plan.base, plan.base_text, plan.variant->platform, ImageRole::base);
}

Result<std::shared_ptr<const BaseImage>> BaseResolver::resolve(const image::ImageReference& reference,
                                                               const std::string& text, const oci::Platform& platform,
                                                               ImageRole role) {
  const auto key = fmt::format("{}\n{}\n{}", role_name(role), text, platform.str());
  return m_bases.get(key, [&]() -> Result<std::shared_ptr<const BaseImage>> {
    auto resolved = [&]() -> Result<std::shared_ptr<const BaseImage>> {
      HWIMG_TRY_ASSIGN(const auto source, source_for(reference));
      std::lock_guard lock(source->mutex);
      auto& reader = *source->image.reader;
      auto base = std::make_shared<BaseImage>();
      base->role = role;
      base->reference = text;
      base->name = qualified_name(reference);
      base->source = reference;
      base->manifest_descriptor = source->image.root;
      if (oci::media_type::is_index(base->manifest_descriptor.media_type)) {
        HWIMG_TRY_ASSIGN(const auto images, image::list_images(reader, base->manifest_descriptor));
        HWIMG_TRY_ASSIGN(base->manifest_descriptor, pick_platform(images, platform));
      }
      HWIMG_TRY_ASSIGN(auto manifest, image::read_manifest(reader, base->manifest_descriptor));
      HWIMG_TRY_ASSIGN(base->config, image::read_config(reader, manifest));
      if (!oci::media_type::is_index(source->image.root.media_type)) {
        HWIMG_TRY(check_config_platform(base->config, platform));
      }
      if (base->config.diff_ids.size() != manifest.layers.size()) {
        return fail("its config lists {} layers, its manifest {}", base->config.diff_ids.size(), manifest.layers.size());
      }
      base->layers = std::move(manifest.layers);
      return std::shared_ptr<const BaseImage>(std::move(base));
    }();
    return with_context(std::move(resolved), fmt::format("failed to use {} image {}", role_name(role), text));
  });
}

Result<std::vector<fs::path>> BaseResolver::layer_files(const BaseImage& base) {
  if (base.is_scratch()) return std::vector<fs::path>{};
  return m_files.get(base.manifest_descriptor.digest, [&]() -> Result<std::vector<fs::path>> {
    auto files = [&]() -> Result<std::vector<fs::path>> {
      HWIMG_TRY_ASSIGN(const auto source, source_for(*base.source));
      std::lock_guard lock(source->mutex);
      auto& reader = *source->image.reader;
      std::vector<fs::path> paths;
      for (const auto& layer : base.layers) {
        if (const auto local = reader.local_blob(layer.digest)) {
          HWIMG_TRY(verify_blob_file(*local, layer));
          paths.push_back(*local);
          continue;
        }
        HWIMG_TRY_ASSIGN(auto* cache, m_open_cache());
        HWIMG_TRY_ASSIGN(paths.emplace_back(), cache->get(reader, layer));
      }
      return paths;
    }();
    return with_context(std::move(files), fmt::format("failed to use {} image {}", role_name(base.role), base.reference));
  });
}

Result<void> import_base_layers(const BaseImage& base, const std::vector<fs::path>& files, const oci::Layout& target) {
  // Layout blobs are the user's immutable files, shared as `cp -l` would; the cache's are hwimg's
  // own and may be rewritten, so a layout gets its own copy (a reflink where the filesystem can).
  const bool may_link = base.source && base.source->kind == image::SourceKind::layout;
  for (std::size_t i = 0; i < base.layers.size(); ++i) {
    const auto& layer = base.layers[i];
    if (target.has_blob(layer.digest)) continue;
    const auto temporary = target.temporary_file("base-layer");
    std::error_code ec;
    if (may_link) fs::create_hard_link(files[i], temporary, ec);
    if (!may_link || ec) {
      HWIMG_TRY(with_context(util::copy_file_contents(files[i], temporary),
                             fmt::format("failed to copy base layer {}", layer.digest.str())));
    }
    HWIMG_TRY(target.adopt_blob(temporary, layer.digest));
  }
  return {};
}

}  // namespace hwimg::build
