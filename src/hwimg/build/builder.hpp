#pragma once
// `hwimg build`: every variant of a recipe into one multi-variant index in an OCI layout.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hwimg/build/variant_builder.hpp"
#include "hwimg/image/cache_lease.hpp"
#include "hwimg/image/open_image.hpp"
#include "hwimg/matrix/expand.hpp"
#include "hwimg/recipe/recipe.hpp"

namespace hwimg::build {

// build: build and write the layout; explain: resolve every image and say, per variant, what the
// build would do (and whether the layout already has it), writing nothing (`hwimg build --explain`).
enum class BuildMode { build, explain };

struct BuildRequest {
  BuildMode mode = BuildMode::build;
  std::filesystem::path recipe;  // empty when `dockerfile` is given on the command line
  // hwimg build --dockerfile FILE ...: a Dockerfile recipe from flags; its relative paths are
  // relative to the working directory.
  std::optional<recipe::DockerfileSpec> dockerfile;
  std::optional<std::filesystem::path> matrix;  // overrides the recipe's `matrix:`
  std::filesystem::path layout;  // -o: the OCI image layout written
  std::string tag = "latest";
  unsigned jobs = 0;                 // variants built at once; 0: one per core
  std::vector<std::string> only;     // variant ids; empty: all
  matrix::ExpandOptions expand;      // --skip-unsupported, where toolkits are
  oci::CompressionOptions compression;
  std::int64_t source_date_epoch = 0;            // SOURCE_DATE_EPOCH: every mtime and `created` time
  Verbosity verbosity = Verbosity::quiet;
  util::Output* output = &util::null_output();   // progress per variant, matrix warnings
  image::OpenOptions images;                     // for registry bases: credentials, --ca-file, ...
  std::filesystem::path cache;                   // the blob cache of registry bases (--cache)
  // Pins what the build uses in `cache` (image/cache_lease.hpp); null: a lease for the build alone.
  std::shared_ptr<image::CacheLease> cache_lease;
  // copied, or for a build straight to a registry (its layout a staging one) left_in_registry:
  // a registry base's layers are then skipped, mounted or relayed by the push, never stored here.
  BaseLayers base_layers = BaseLayers::copied;
  // This machine's (host_platform): what builder images are resolved for, and the architecture of
  // the portable variant a recipe without a matrix builds.
  oci::Platform host_platform;
  // The part of hwimg's environment a build step on the host gets (BuildSettings::host_environment).
  std::map<std::string, std::string> host_environment;
  // hwimg's whole environment, of which steps get what build.pass_env names (BuildSettings).
  std::map<std::string, std::string> invoking_environment;
};

struct WrittenIndex {
  oci::Descriptor descriptor;
  std::size_t variants = 0;  // in the index: those built, and for --only the others kept
};

struct BuildReport {
  std::vector<BuiltVariant> variants;  // in matrix order
  WrittenIndex index;
  // Every base and builder image the variants were built from, for a push to mount their layers.
  std::vector<std::shared_ptr<const BaseImage>> images;
  std::vector<std::string> plan;  // BuildMode::explain: the plan, one line each; nothing built
};

// Builds every (or every --only) variant into the layout and writes the index and its tags.
[[nodiscard]] Result<BuildReport> build_recipe(const BuildRequest& request);

// Writes (or, for a partial build, merges) the multi-variant index and the tags TAG and TAG-<id>.
enum class IndexMerge { replace, keep_other_variants };
[[nodiscard]] Result<WrittenIndex> write_index(const oci::Layout& layout, const std::string& tag,
                                                  const std::vector<BuiltVariant>& variants,
                                                  const oci::Annotations& annotations, IndexMerge merge);

}  // namespace hwimg::build
