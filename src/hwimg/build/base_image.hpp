#pragma once
// The image a variant builds on: nothing ("scratch"), a variant of an image in an OCI layout, or
// one in a registry (docs/recipe.md#base), resolved for the variant's platform. Its layers are
// reused by digest, never re-packed: from the layout, from the user's blob cache, or (for a build
// straight to a registry) not fetched at all.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hwimg/build/variant_plan.hpp"
#include "hwimg/image/blob_cache.hpp"
#include "hwimg/image/open_image.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/layout.hpp"
#include "hwimg/util/single_flight.hpp"

namespace hwimg::build {

// What an image is to a build: the base its variants' layers go on, or the builder image their
// build step runs in (docs/recipe.md#build-image), which is resolved and fetched the same way.
enum class ImageRole { base, builder };

struct BaseImage {
  ImageRole role = ImageRole::base;
  std::string reference;                       // as the plan names it, for messages
  std::string name;                            // org.opencontainers.image.base.name: fully qualified
  std::optional<image::ImageReference> source; // empty for scratch
  oci::Descriptor manifest_descriptor;
  oci::ImageConfig config;
  std::vector<oci::Descriptor> layers;

  [[nodiscard]] bool is_scratch() const { return !source.has_value(); }
};

// Every base of one build, each resolved (and its layers verified or fetched) once, whichever
// variants share it; different bases are fetched in parallel.
class BaseResolver {
public:
  // Relative layout directories are relative to `recipe_directory`; registry bases are read with
  // `options` and their layers kept in the cache `open_cache` gives (called when first needed).
  BaseResolver(std::filesystem::path recipe_directory, image::OpenOptions options,
               std::function<Result<image::BlobCache*>()> open_cache);

  // The base for the plan's variant: its manifest and config, no layer read.
  [[nodiscard]] Result<std::shared_ptr<const BaseImage>> resolve(const VariantPlan& plan);
  // `reference` (written `text`) for `platform`, in `role`: resolved once per build like bases.
  [[nodiscard]] Result<std::shared_ptr<const BaseImage>> resolve(const image::ImageReference& reference,
                                                                 const std::string& text,
                                                                 const oci::Platform& platform, ImageRole role);
  // The files holding the base's layers, verified (layout) or fetched into the cache (registry).
  [[nodiscard]] Result<std::vector<std::filesystem::path>> layer_files(const BaseImage& base);
  // Every image resolved so far, in both roles.
  [[nodiscard]] std::vector<std::shared_ptr<const BaseImage>> resolved() { return m_bases.values(); }
  // The user's blob cache, opened on first use.
  [[nodiscard]] Result<image::BlobCache*> cache() { return m_open_cache(); }

private:
  struct Source;
  Result<std::shared_ptr<Source>> source_for(const image::ImageReference& reference);

  std::filesystem::path m_recipe_directory;
  image::OpenOptions m_options;
  std::function<Result<image::BlobCache*>()> m_open_cache;
  // A build reports a base that failed once per variant on it, without asking its registry again.
  util::SingleFlight<std::string, std::shared_ptr<const BaseImage>> m_bases{util::Keep::everything};
  util::SingleFlight<std::string, std::shared_ptr<Source>> m_sources;
  util::SingleFlight<oci::Digest, std::vector<std::filesystem::path>> m_files{util::Keep::everything};
};

// The entry of a multi-platform image for `platform`: same os and architecture; on amd64 the
// highest level not above the variant's (the entry without a variant being v1). The error lists
// the platforms there are.
[[nodiscard]] Result<oci::Descriptor> pick_platform(const std::vector<oci::Descriptor>& images,
                                                    const oci::Platform& platform);

// Puts the base's layer blobs into `target`: hard links to a layout base's blobs where possible,
// copies of the cache's (a later write to the cache must not reach a layout built before).
[[nodiscard]] Result<void> import_base_layers(const BaseImage& base, const std::vector<std::filesystem::path>& files,
                                              const oci::Layout& target);

}  // namespace hwimg::build
