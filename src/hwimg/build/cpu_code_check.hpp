#pragma once
// The builder's check that a variant's programs only use the instructions its CPU label promises
// (docs/recipe.md#cpu-code): every ELF program and library in the variant's own layers, in its
// recipe's shared layers and in its base image's layers is scanned (verify/code_needs) and held
// against the label (verify/judge). Code the label does not cover (AVX2 in an x86-64-v2 variant, a
// GNU ISA-needed note above the level) is refused in its own layers under `verify.cpu: strict`, the
// default, warned about in shared layers, and only reported in base layers, which the recipe did
// not make. Dispatched code is reported as accepted: it runs only where the CPU has the feature.

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "hwimg/build/base_image.hpp"
#include "hwimg/build/variant_plan.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/output.hpp"
#include "hwimg/util/single_flight.hpp"
#include "hwimg/util/thread_pool.hpp"
#include "hwimg/verify/needs_cache.hpp"

namespace hwimg::build {

using SharedNeeds = std::shared_ptr<const verify::LayerNeeds>;

class CpuCodeCheck {
public:
  // Base layers' needs are kept under `cache_root` (the user's cache) by digest.
  explicit CpuCodeCheck(std::filesystem::path cache_root);

  // `base_files` are the files of `base.layers`, in order; empty when they stay in their registry.
  [[nodiscard]] Result<void> check(const VariantPlan& plan, const BaseImage& base,
                                   std::span<const std::filesystem::path> base_files, util::Output& output);
  // Scans the base's layers as `check` of the plan would, ahead of it (once per layer and build):
  // a Dockerfile build does it while buildah pulls its images.
  [[nodiscard]] Result<void> scan_base(const VariantPlan& plan, const BaseImage& base,
                                       std::span<const std::filesystem::path> base_files, util::Output& output);

private:
  [[nodiscard]] Result<SharedNeeds> needs_once(const std::string& key,
                                               const std::function<Result<verify::LayerNeeds>()>& scan);
  [[nodiscard]] Result<SharedNeeds> base_layer_needs(const VariantPlan& plan, const oci::Digest& digest,
                                                     const std::filesystem::path& file, util::Output& output);
  [[nodiscard]] Result<verify::LayerNeeds> directory_needs(const LayerPlan& layer);

  verify::NeedsCache m_cache;
  util::ThreadPool m_pool;
  util::SingleFlight<std::string, SharedNeeds> m_needs{util::Keep::everything};
};

}  // namespace hwimg::build
