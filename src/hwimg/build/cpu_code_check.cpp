#include "hwimg/build/cpu_code_check.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "hwimg/build/architecture_check.hpp"
#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/hw/x86_isa_scan.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t listed_problems = 4;

struct Findings {
  std::vector<std::string> refused;     // under verify.cpu strict
  std::vector<std::string> warned;      // under warn
  std::vector<std::string> dispatched;  // accepted: runs only where the CPU has the feature
};

// "avx2 (vpbroadcastd at 0x1139), fma (vfmadd231ps at 0x1150)": what `function` needs beyond `allowed`.
std::string missing_features(const hw::FunctionUse& function, const hw::FeatureSet& allowed) {
  std::vector<std::string> missing;
  hw::FeatureSet named;
  for (const auto& use : function.uses) {
    for (const auto feature : use.features) {
      if (!hw::is_instruction_set_feature(feature) || allowed.contains(feature) || named.contains(feature)) continue;
      named.emplace(feature);
      missing.push_back(fmt::format("{} ({} at {:#x})", feature, use.mnemonic, use.address));
    }
  }
  return util::join(missing, ", ");
}

// Runtime libraries that choose their code by CPUID when they start (glibc's dynamic loader and its
// cpu_features, libc's and libm's IFUNCs, libstdc++'s random_device, libgcc's unwinder, OpenSSL's
// OPENSSL_ia32cap; docs/compatibility.md#instruction-sets). Build steps copy them into images (the
// CUDA example bundles the host's), stripped, so their dispatch is not visible in symbols.
bool selects_code_at_run_time(const fs::path& file) {
  static constexpr std::array<std::string_view, 11> prefixes{
      "ld-linux-x86-64.so.", "libc.so.", "libm.so.", "libmvec.so.", "libpthread.so.", "libdl.so.",
      "librt.so.", "libstdc++.so.", "libgcc_s.so.", "libcrypto.so.", "libssl.so."};
  const auto name = file.filename().string();
  return std::ranges::any_of(prefixes, [&](std::string_view prefix) { return name.starts_with(prefix); });
}

void check_file(const fs::path& file, const std::string& in_image, const hw::CpuTarget& target,
                const hw::FeatureSet& allowed, std::vector<std::string>& problems, std::vector<std::string>& dispatched) {
  const auto identity = elf_identity_of(file);
  if (!identity || !identity->is_loadable() || identity->machine != hw::elf_machine_x86_64 ||
      identity->elf_class != hw::ElfClass::elf64) {
    return;
  }
  const auto bytes = util::read_file(file);
  if (!bytes) {
    problems.push_back(fmt::format("{} could not be read: {}", in_image, bytes.error().message));
    return;
  }
  const auto scan = hw::scan_x86_isa(std::as_bytes(std::span(*bytes)), in_image);
  if (!scan) {
    problems.push_back(scan.error().message);
    return;
  }
  if (scan->needed_level && *scan->needed_level > target.level) {
    problems.push_back(fmt::format("{} says in its GNU property note (GNU_PROPERTY_X86_ISA_1_NEEDED) that it needs {}",
                                   in_image, hw::x86_level_name(*scan->needed_level)));
  }
  for (const auto& function : scan->functions) {
    const auto missing = missing_features(function, allowed);
    if (missing.empty()) continue;
    auto line = fmt::format("{}: function {} needs {}", in_image, function.name, missing);
    if (hw::is_dispatched(function.dispatch)) {
      dispatched.push_back(fmt::format("{}, {}", line, hw::dispatch_name(function)));
    } else if (selects_code_at_run_time(file)) {
      dispatched.push_back(fmt::format("{}, in a runtime library that selects its code by CPUID", line));
    } else {
      problems.push_back(std::move(line));
    }
  }
}

std::string listing(const std::vector<std::string>& lines) {
  const auto shown = std::min(lines.size(), listed_problems);
  std::vector<std::string> first(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(shown));
  return util::join(first, "; ") +
         (lines.size() > shown ? fmt::format("; and {} more", lines.size() - shown) : std::string());
}

}  // namespace

Result<void> check_cpu_code(const VariantPlan& plan, util::Output& output) {
  const auto& variant = *plan.variant;
  if (variant.platform.architecture != "amd64") return {};
  const auto* target = hw::find_cpu_target(variant.cpu_target.empty() ? variant.cpu_level : variant.cpu_target);
  if (target == nullptr) return {};
  // The level rows list only what they add over the baseline; the baseline is every amd64 CPU's.
  auto allowed = hw::x86_level_features(target->level);
  allowed.insert(target->features.begin(), target->features.end());
  Findings findings;
  for (const auto& layer : plan.layers) {
    const auto mode = plan.verify_cpu.value_or(layer.variant_specific ? recipe::CpuVerify::strict
                                                                      : recipe::CpuVerify::warn);
    if (mode == recipe::CpuVerify::off) continue;
    auto& problems = mode == recipe::CpuVerify::strict ? findings.refused : findings.warned;
    for_each_layer_file(layer, [&](const fs::path& file, const std::string& in_image) {
      check_file(file, in_image, *target, allowed, problems, findings.dispatched);
    });
  }
  for (const auto& line : findings.warned) {
    output.warning(fmt::format("variant {} is labelled {}, but {}", variant.id, target->name, line));
  }
  if (!findings.dispatched.empty()) {
    output.progress(fmt::format("variant {}: dispatched code beyond {} accepted: {}", variant.id, target->name,
                                listing(findings.dispatched)));
  }
  if (findings.refused.empty()) return {};
  return fail("failed to check the CPU code of variant {}: it is labelled {}, but {} (verify.cpu: strict; "
              "docs/recipe.md#cpu-code)",
              variant.id, target->name, listing(findings.refused));
}

}  // namespace hwimg::build
