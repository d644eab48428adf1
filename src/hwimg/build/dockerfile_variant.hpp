#pragma once
// One variant of a Dockerfile recipe: buildah builds it into a staging layout, then hwimg makes it a
// variant like any other (docs/recipe.md#bring-your-dockerfile): the base's layers are the base's
// own blobs again, the layers the Dockerfile added are kept byte for byte (compressed as the build
// asks when buildah left them uncompressed), their code checked against the variant's label, and
// the config labelled and the manifest annotated as for a recipe.

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hwimg/build/base_image.hpp"
#include "hwimg/build/buildah.hpp"
#include "hwimg/build/variant_builder.hpp"

namespace hwimg::build {

// Per stage of the plan's Dockerfile, the image it starts from as the build resolved it; null for
// a stage that starts from scratch or from another stage.
using StageImages = std::vector<std::shared_ptr<const BaseImage>>;

// `image` as a pinned FROM names it (NAME@DIGEST); none for scratch and images from a local layout.
[[nodiscard]] std::optional<std::string> pinned_reference(const std::shared_ptr<const BaseImage>& image);

// The image buildah already built for a stage every variant shares, by stage index: its ID in
// buildah's storage (64 hex digits).
using SharedStageImages = std::map<std::size_t, std::string>;

// The Dockerfile with every FROM of a registry image pinned to the digest in `images`, so buildah
// builds on exactly what the build resolved, checked and keyed. A stage in `shared` becomes a FROM
// of the image built for it, its instructions blank lines: buildah then neither hashes its COPY
// sources nor looks up each of its steps in the cache again for every variant, and builds the same
// image on it. A stage with an ONBUILD of its own is left as written. Everything else as written,
// on the same lines.
[[nodiscard]] std::string pinned_dockerfile(const VariantPlan& plan, const StageImages& images,
                                            const SharedStageImages& shared);

// Runs `build` and, when buildah fails, says which variant (or stage), which Dockerfile line and
// what its output ended with.
[[nodiscard]] Result<void> run_buildah(const Buildah& buildah, const BuildahBuild& build, const VariantPlan& plan);

struct DockerfileVariantInputs {
  const BaseImage& base;      // the final stage's, as resolved
  const StageImages& images;  // every stage's
  const SharedStageImages& shared;
  std::filesystem::path scratch;  // this variant's own scratch directory
};

[[nodiscard]] Result<BuiltVariant> build_dockerfile_variant(VariantPlan plan, const DockerfileVariantInputs& inputs,
                                                            BaseResolver& bases, const Buildah& buildah,
                                                            const BuildSettings& settings,
                                                            const LayoutProvider& layout, LayerMemo& memo,
                                                            CodeChecks checks);

}  // namespace hwimg::build
