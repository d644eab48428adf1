#include "hwimg/verify/code_needs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "hwimg/hw/a64_feature_scan.hpp"
#include "hwimg/hw/elf.hpp"
#include "hwimg/hw/x86_isa_scan.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::verify {
namespace {

// One entry per feature, at its first use; what every x86-64 CPU has is left out.
FunctionNeeds needs_of(const hw::FunctionUse& function, const hw::FeatureSet& baseline) {
  FunctionNeeds needs{function.name, function.dispatch, function.dispatched_by, {}};
  for (const auto& use : function.uses) {
    for (const auto feature : use.features) {
      if (baseline.contains(feature) ||
          std::ranges::any_of(needs.uses, [&](const FeatureUse& known) { return known.feature == feature; })) {
        continue;
      }
      needs.uses.push_back({std::string(feature), use.mnemonic, use.address});
    }
  }
  return needs;
}

}  // namespace

bool may_be_program(std::span<const std::byte> head) {
  const auto identity = hw::read_elf_identity(head);
  return identity && identity->is_loadable() && identity->machine != hw::elf_machine_cuda;
}

std::optional<FileNeeds> file_needs(std::span<const std::byte> bytes, std::string path, util::ThreadPool* pool) {
  const auto identity = hw::read_elf_identity(bytes.first(std::min(bytes.size(), hw::elf_identity_size)));
  if (!identity || !identity->is_loadable() || identity->machine == hw::elf_machine_cuda) return std::nullopt;
  FileNeeds needs{std::move(path), *identity, std::nullopt, {}, {}, 0};
  if (identity->elf_class != hw::ElfClass::elf64) return needs;
  // x86-64 decoded with Zydis; AArch64 by the A64 encoding table, which tells only SVE apart and
  // so has no baseline to leave out (docs/compatibility.md#instruction-sets-arm64).
  const bool x86 = identity->machine == hw::elf_machine_x86_64;
  if (!x86 && identity->machine != hw::elf_machine_aarch64) return needs;
  auto scan = x86 ? hw::scan_x86_isa(bytes, needs.path, {pool}) : hw::scan_a64_features(bytes, needs.path);
  if (!scan) {
    needs.scan_error = scan.error().message;
    return needs;
  }
  needs.needed_level = scan->needed_level;
  needs.code_bytes = scan->bytes;
  static const auto x86_baseline = hw::x86_level_features(hw::X86Level::v1);
  static const hw::FeatureSet no_baseline;
  const auto& baseline = x86 ? x86_baseline : no_baseline;
  for (const auto& function : scan->functions) {
    auto function_needs = needs_of(function, baseline);
    if (!function_needs.uses.empty()) needs.functions.push_back(std::move(function_needs));
  }
  return needs;
}

std::string features_beyond(const FunctionNeeds& function, const hw::FeatureSet& allowed) {
  std::vector<std::string> missing;
  for (const auto& use : function.uses) {
    if (!allowed.contains(use.feature) && hw::is_instruction_set_feature(use.feature)) {
      missing.push_back(fmt::format("{} ({} at {:#x})", use.feature, use.mnemonic, use.address));
    }
  }
  return util::join(missing, ", ");
}

}  // namespace hwimg::verify
