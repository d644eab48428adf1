#include "hwimg/build/cpu_code_check.hpp"

#include <fmt/format.h>

#include "hwimg/build/architecture_check.hpp"
#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/verify/judge.hpp"
#include "hwimg/verify/layer_needs.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

namespace {

// The target the plan's variant is held against; nullptr where its CPU code is not checked.
const hw::CpuTarget* checked_target(const VariantPlan& plan) {
  if (plan.verify_cpu == recipe::CpuVerify::off) return nullptr;
  const auto& variant = *plan.variant;
  return hw::find_cpu_target(variant.cpu_target.empty() ? variant.cpu_level : variant.cpu_target);
}

}  // namespace

CpuCodeCheck::CpuCodeCheck(fs::path cache_root) : m_cache(std::move(cache_root)), m_pool(util::default_parallelism()) {}

Result<SharedNeeds> CpuCodeCheck::needs_once(const std::string& key,
                                             const std::function<Result<verify::LayerNeeds>()>& scan) {
  return m_needs.get(key, [&]() -> Result<SharedNeeds> {
    HWIMG_TRY_ASSIGN(auto needs, scan());
    return std::make_shared<const verify::LayerNeeds>(std::move(needs));
  });
}

Result<verify::LayerNeeds> CpuCodeCheck::directory_needs(const LayerPlan& layer) {
  verify::NeedsCollector collector(m_pool);
  std::vector<std::string> unreadable;
  for_each_layer_file(layer, [&](const fs::path& file, const std::string& in_image) {
    // Only programs are read whole.
    if (const auto identity = elf_identity_of(file); !identity || !identity->is_loadable()) return;
    auto bytes = util::read_file(file);
    if (!bytes) {
      unreadable.push_back(fmt::format("{}: {}", in_image, bytes.error().message));
      return;
    }
    collector.add(in_image, std::move(*bytes));
  });
  auto needs = collector.finish();
  if (!unreadable.empty()) return fail("failed to read the programs of {}: {}", layer.from.string(), verify::first_lines(unreadable));
  return needs;
}

Result<SharedNeeds> CpuCodeCheck::base_layer_needs(const VariantPlan& plan, const oci::Digest& digest,
                                                   const fs::path& file, util::Output& output) {
  // Said once per base layer and build, not per variant: the variants share it.
  return needs_once("layer " + digest.str(), [&]() -> Result<verify::LayerNeeds> {
    HWIMG_TRY_ASSIGN(auto needs, verify::blob_needs(file, digest, &m_cache, m_pool));
    if (auto line = verify::overlay_xattr_line(needs, fmt::format("base image {} layer {}", plan.base_text, digest.str()))) {
      output.warning(*line + "; rebuild the base as root, with vfs storage or with a buildah/podman that drops them");
    }
    return needs;
  });
}

Result<void> CpuCodeCheck::scan_base(const VariantPlan& plan, const BaseImage& base, std::span<const fs::path> base_files,
                                     util::Output& output) {
  if (checked_target(plan) == nullptr) return {};
  for (std::size_t i = 0; i < base_files.size() && i < base.layers.size(); ++i) {
    HWIMG_TRY(with_context(base_layer_needs(plan, base.layers[i].digest, base_files[i], output),
                           fmt::format("failed to scan base image {} for the CPU check", plan.base_text)));
  }
  return {};
}

Result<void> CpuCodeCheck::check(const VariantPlan& plan, const BaseImage& base, std::span<const fs::path> base_files,
                                 util::Output& output) {
  const auto& variant = *plan.variant;
  const auto* target = checked_target(plan);
  if (target == nullptr) return {};
  const auto label = verify::label_for(*target, variant.platform.architecture);
  const auto context = fmt::format("failed to check the CPU code of variant {}", variant.id);
  verify::Findings refused;
  verify::Findings warned;
  verify::Findings reported;  // base layers
  for (const auto& layer : plan.layers) {
    const auto mode = plan.verify_cpu.value_or(layer.variant_specific ? recipe::CpuVerify::strict
                                                                      : recipe::CpuVerify::warn);
    auto& findings = mode == recipe::CpuVerify::strict ? refused : warned;
    if (layer.variant_specific) {
      HWIMG_TRY_ASSIGN(const auto needs, with_context(directory_needs(layer), context));
      verify::judge_layer(needs, label, "its own layer", findings);
      continue;
    }
    HWIMG_TRY_ASSIGN(const auto shared, with_context(needs_once("shared " + layer.from.string() + "\n" + layer.to,
                                                                [&] { return directory_needs(layer); }),
                                                     context));
    verify::judge_layer(*shared, label, "a layer every variant shares", findings);
  }
  for (const auto& layer : plan.built_layers) {
    auto& findings = plan.verify_cpu.value_or(recipe::CpuVerify::strict) == recipe::CpuVerify::strict ? refused : warned;
    HWIMG_TRY_ASSIGN(const auto needs, with_context(verify::blob_needs(layer.file, layer.diff_id, &m_cache, m_pool), context));
    verify::judge_layer(needs, label, "its own layer " + built_layer_name(layer), findings);
  }
  for (std::size_t i = 0; i < base_files.size() && i < base.layers.size(); ++i) {
    const auto& digest = base.layers[i].digest;
    HWIMG_TRY_ASSIGN(const auto needs, with_context(base_layer_needs(plan, digest, base_files[i], output), context));
    verify::judge_layer(*needs, label, fmt::format("base image layer {}", digest.str()), reported);
  }

  for (const auto& line : warned.uncovered) {
    output.warning(fmt::format("variant {} is labelled {}, but {}", variant.id, target->name, line));
  }
  // The recipe did not make its base: what the base holds is a note, not a warning on every build.
  if (!reported.uncovered_programs.empty()) {
    output.progress(fmt::format("variant {}: base image {} has code beyond {} without a CPU check the scan can see, "
                                "in {} programs (reported, not refused; `hwimg inspect --verify` lists it): {}",
                                variant.id, plan.base_text, target->name, reported.uncovered_programs.size(),
                                verify::program_summary(reported.uncovered_programs)));
  }
  auto dispatched = std::move(refused.dispatched);
  dispatched.insert(dispatched.end(), warned.dispatched.begin(), warned.dispatched.end());
  if (!dispatched.empty()) {
    output.progress(fmt::format("variant {}: dispatched code beyond {} accepted: {}", variant.id, target->name,
                                verify::first_lines(dispatched)));
  }
  if (!reported.dispatched_programs.empty()) {
    output.progress(fmt::format("variant {}: base image {} has dispatched code beyond {} in {} programs, accepted: {}",
                                variant.id, plan.base_text, target->name, reported.dispatched_programs.size(),
                                verify::program_summary(reported.dispatched_programs)));
  }
  if (refused.uncovered.empty()) return {};
  return fail("{}: it is labelled {}, but {} (verify.cpu: strict; docs/recipe.md#cpu-code)", context, target->name,
              verify::first_lines(refused.uncovered));
}

}  // namespace hwimg::build
