#pragma once
// One variant of a recipe, planned: every ${...} substituted and every path resolved once, so the
// cache key, the build step, layer packing and the image config all read the same values.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hwimg/build/driver_bundle.hpp"
#include "hwimg/image/open_image.hpp"
#include "hwimg/matrix/variant.hpp"
#include "hwimg/recipe/dockerfile.hpp"
#include "hwimg/recipe/recipe.hpp"
#include "hwimg/recipe/variables.hpp"

namespace hwimg::build {

struct BuildStepPlan {
  std::string run;
  std::filesystem::path workdir;  // absolute
  recipe::SourceLocation run_location;
  recipe::SourceLocation workdir_location;
  // HWIMG_* (and CUDA_HOME) and the recipe's build.env; over the host's or the image's own.
  std::map<std::string, std::string> environment;
  std::vector<std::string> pass_env;  // build.pass_env: taken from hwimg's environment where set
  bool workdir_in_build_output = false;            // under ${out}
  // The builder image the step runs in (docs/recipe.md#build-image); nullopt: on the host.
  std::optional<image::ImageReference> image;
  std::string image_text;  // as substituted, for messages and the cache key
  recipe::SourceLocation image_location;
};

struct LayerPlan {
  std::filesystem::path from;  // absolute
  std::string to;              // the path in the image, as substituted
  recipe::SourceLocation from_location;
  recipe::SourceLocation to_location;
  // Packed for this variant alone: it comes from the build step or its path names a variable.
  bool variant_specific = false;
  bool from_build_output = false;  // under ${out}
};

struct ConfigPlan {
  std::optional<std::vector<std::string>> entrypoint;
  std::optional<std::vector<std::string>> cmd;
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::pair<std::string, std::string>> labels;
  std::optional<std::string> workdir;
  std::optional<std::string> user;
  std::optional<std::string> stop_signal;
  std::vector<std::string> exposed_ports;
};

// What one stage of a Dockerfile starts from, for one variant (its FROM, build arguments applied).
struct StageSource {
  enum class Kind { scratch, stage, image };
  Kind kind = Kind::scratch;
  std::string text;                          // the FROM image as expanded
  std::size_t stage = 0;                     // Kind::stage: the stage it continues
  std::optional<image::ImageReference> image;  // Kind::image
  recipe::SourceLocation location;           // Dockerfile:LINE:COLUMN of the image in FROM
};

// A variant of a Dockerfile recipe (docs/recipe.md#bring-your-dockerfile), planned.
struct DockerfilePlan {
  std::shared_ptr<const recipe::Dockerfile> parsed;
  std::filesystem::path dockerfile;  // absolute
  std::filesystem::path context;     // absolute
  std::optional<std::string> target;
  std::vector<std::pair<std::string, std::string>> args;  // substituted
  std::size_t final_stage = 0;       // the target's stage, or the last
  std::vector<StageSource> stages;   // one per stage of `parsed`
};

// A layer a Dockerfile build added to its base: buildah's layer blob as it wrote it.
struct BlobLayer {
  std::filesystem::path file;
  oci::Digest diff_id;
  std::string created_by;  // the Dockerfile instruction that made it, from the image history
};

// "sha256:... made by \"RUN make\"": a layer a Dockerfile added, as messages name it.
[[nodiscard]] std::string built_layer_name(const BlobLayer& layer);

struct VariantPlan {
  const matrix::Variant* variant = nullptr;
  std::filesystem::path out;              // ${out}: where the build step writes
  recipe::Variables variables;            // with ${out}
  std::string base_text;                  // as substituted, for messages and annotations
  recipe::SourceLocation base_location;
  std::optional<image::ImageReference> base;  // nullopt: scratch
  std::optional<BuildStepPlan> build;
  std::vector<LayerPlan> layers;
  ConfigPlan config;
  oci::Annotations annotations;           // the recipe's, substituted
  std::optional<recipe::CpuVerify> verify_cpu;  // the recipe's verify.cpu
  std::optional<DockerfilePlan> dockerfile;     // a Dockerfile recipe: no build step, no layers
  std::vector<BlobLayer> built_layers;          // what the Dockerfile added, once buildah ran
  std::optional<DriverPlan> driver;             // the user-mode driver the variant bundles

  [[nodiscard]] const std::string& id() const { return variant->id; }
};

// Where a builder image's CUDA toolkit is unless the matrix names cuda_home.
inline constexpr std::string_view builder_image_cuda_home = "/usr/local/cuda";

// `variant` must outlive the plan. Fails on a base or builder image reference that does not parse.
[[nodiscard]] Result<VariantPlan> plan_variant(const recipe::Recipe& recipe, const matrix::Variant& variant,
                                               const std::filesystem::path& out);

}  // namespace hwimg::build
