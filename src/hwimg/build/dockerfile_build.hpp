#pragma once
// Every variant of a Dockerfile recipe (docs/recipe.md#bring-your-dockerfile): planned together,
// each one's images resolved and its cache key taken, the stages all variants build alike run once
// before the rest (so buildah's layer cache serves them to every variant), then the variants up to
// -j at once.

#include <filesystem>
#include <vector>

#include "hwimg/build/base_image.hpp"
#include "hwimg/build/buildah.hpp"
#include "hwimg/build/variant_builder.hpp"
#include "hwimg/matrix/variant.hpp"
#include "hwimg/oci/layout.hpp"
#include "hwimg/recipe/recipe.hpp"

namespace hwimg::build {

struct DockerfileBuild {
  const recipe::Recipe& recipe;
  const BuildSettings& settings;
  const oci::Layout* existing;  // the layout as it was before this build, for its cache
  const LayoutProvider& layout;
  std::filesystem::path output;  // the layout's directory, absolute
  LayerMemo& memo;
  BaseResolver& bases;
  CodeChecks checks;
  const Buildah& buildah;
  oci::Platform host_platform;  // what the images of stages other than the final one's are for
  unsigned jobs = 1;
};

// In matrix order, or every variant's error.
[[nodiscard]] Result<std::vector<BuiltVariant>> build_dockerfile_variants(DockerfileBuild& build,
                                                                          const std::vector<matrix::Variant>& variants);

// What build_dockerfile_variants would do, one line each: the stages built once, and per variant
// its arguments, each stage's image pinned, and whether the layout already has it.
[[nodiscard]] Result<std::vector<std::string>> explain_dockerfile_variants(DockerfileBuild& build,
                                                                           const std::vector<matrix::Variant>& variants);

}  // namespace hwimg::build
