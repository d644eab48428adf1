#include "hwimg/hw/cpu_targets.hpp"

#include <algorithm>
#include <span>
#include <utility>

#include "hwimg/hw/detail/cpu_target_table.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::hw {
namespace {

using VendorSpelling = std::pair<std::string_view, std::string_view>;
// CPUID vendor strings and aarch64 implementer codes with NFD's names (docs/compatibility.md#aarch64-midr).
constexpr VendorSpelling k_x86_vendors[] = {
    {"GenuineIntel", "Intel"}, {"AuthenticAMD", "AMD"}, {"HygonGenuine", "Hygon"}};
constexpr VendorSpelling k_arm_implementers[] = {
    {"0x41", "ARM"},       {"0x42", "Broadcom"}, {"0x43", "Cavium"}, {"0x46", "Fujitsu"},
    {"0x48", "HiSilicon"}, {"0x4e", "NVIDIA"},   {"0x50", "APM"},    {"0x51", "Qualcomm"},
    {"0x53", "Samsung"},   {"0x56", "Marvell"},  {"0x61", "Apple"},  {"0xc0", "Ampere"}};

void add_ancestor(CpuTarget& target, std::string_view name) {
  if (std::ranges::find(target.ancestors, name) == target.ancestors.end()) {
    target.ancestors.push_back(name);
  }
}

CpuTarget level_target(X86Level level) {
  static constexpr std::string_view names[] = {"x86-64-v1", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  static constexpr std::string_view flags[] = {
      "-march=x86-64 -mtune=generic", "-march=x86-64-v2 -mtune=generic", "-march=x86-64-v3 -mtune=generic",
      "-march=x86-64-v4 -mtune=generic"};
  const auto n = static_cast<std::size_t>(x86_level_number(level) - 1);
  CpuTarget target;
  target.name = names[n];
  target.vendor = "generic";
  target.level = level;
  if (level != X86Level::v1) {
    target.parents = {names[n - 1]};
    for (std::size_t k = n; k-- > 0;) {
      target.ancestors.push_back(names[k]);
    }
    for (int k = 2; k <= x86_level_number(level); ++k) {
      for (const auto feature : x86_level_added_features(static_cast<X86Level>(k))) {
        target.features.emplace(feature);
      }
    }
  }
  target.gcc = {level == X86Level::v1 ? GccFlags{4, 2, flags[n]} : GccFlags{11, 1, flags[n]}};
  target.source = "x86-64 psABI";
  return target;
}

std::vector<CpuTarget> build_table() {
  std::vector<CpuTarget> table;
  for (const auto level : {X86Level::v1, X86Level::v2, X86Level::v3, X86Level::v4}) {
    table.push_back(level_target(level));
  }
  for (const auto& row : detail::cpu_target_rows()) {
    CpuTarget target;
    target.name = row.name;
    target.arch = row.arch;
    target.vendor = row.vendor;
    target.cpu_part = row.cpu_part;
    target.parents = row.parents;
    target.gcc = row.gcc;
    target.source = row.source;
    // The union over every parent: a target runs its parents' code (archspec's core2 omits nocona's
    // sse3, which every Core 2 has).
    for (const auto parent : row.parents) {
      const auto it = std::ranges::find(table, parent, &CpuTarget::name);
      target.features.insert(it->features.begin(), it->features.end());
      add_ancestor(target, parent);
      for (const auto name : it->ancestors) {
        add_ancestor(target, name);
      }
    }
    for (const auto feature : row.added) {
      target.features.emplace(feature);
    }
    target.level = row.arch == CpuArch::amd64 ? x86_level_of(target.features) : X86Level::v1;
    table.push_back(std::move(target));
  }
  return table;
}

bool never_detected(const CpuTarget& target) {
  // archspec: aarch64's armv8.x/9.x generics have no features, so they would match anything.
  return target.arch == CpuArch::arm64 && target.is_generic() && target.name != "aarch64";
}

// archspec's ordering: more ancestors, then more features.
bool deeper(const CpuTarget& a, const CpuTarget& b) {
  const auto depth_a = ancestor_count(a);
  const auto depth_b = ancestor_count(b);
  return depth_a != depth_b ? depth_a > depth_b : a.features.size() > b.features.size();
}

// cpu_target_compatible without collecting what is missing: the host matcher asks it of every target.
bool runs_on(const CpuTarget& target, std::string_view vendor, const FeatureSet& features) {
  return (target.is_generic() || target.vendor == vendor) &&
         std::ranges::all_of(target.features, [&](const std::string& feature) {
           return features.contains(feature) || !is_instruction_set_feature(feature);
         });
}

}  // namespace

std::span<const CpuTarget> cpu_targets() {
  static const std::vector<CpuTarget> table = build_table();
  return table;
}

const CpuTarget* find_cpu_target(std::string_view name) {
  std::string_view wanted = name;
  if (const auto level = parse_x86_level(name)) {
    wanted = cpu_targets()[static_cast<std::size_t>(x86_level_number(*level) - 1)].name;
  }
  const auto targets = cpu_targets();
  const auto it = std::ranges::find(targets, wanted, &CpuTarget::name);
  return it == targets.end() ? nullptr : &*it;
}

std::vector<std::string> cpu_target_names() {
  std::vector<std::string> names;
  for (const auto& target : cpu_targets()) {
    names.emplace_back(target.name);
  }
  return names;
}

bool descends_from(const CpuTarget& target, std::string_view ancestor) {
  return target.name == ancestor || std::ranges::find(target.ancestors, ancestor) != target.ancestors.end();
}

std::size_t ancestor_count(const CpuTarget& target) {
  return target.ancestors.size();
}

std::optional<std::string> gcc_flags(const CpuTarget& target, int gcc_major, int gcc_minor) {
  for (const auto& entry : target.gcc) {
    if (gcc_major > entry.major || (gcc_major == entry.major && gcc_minor >= entry.minor)) {
      return std::string(entry.flags);
    }
  }
  return std::nullopt;
}

CpuTargetCheck cpu_target_compatible(const CpuTarget& target, std::string_view host_vendor,
                                     const FeatureSet& host_features) {
  CpuTargetCheck check;
  check.vendor_matches = target.is_generic() || target.vendor == host_vendor;
  for (const auto& feature : target.features) {
    if (is_instruction_set_feature(feature) && !host_features.contains(feature)) {
      check.missing_features.push_back(feature);
    }
  }
  return check;
}

const CpuTarget& best_cpu_target(CpuArch arch, std::string_view vendor, const FeatureSet& features,
                                 std::string_view cpu_part) {
  std::vector<const CpuTarget*> compatible;
  for (const auto& target : cpu_targets()) {
    if (target.arch == arch && !never_detected(target) && runs_on(target, vendor, features)) {
      compatible.push_back(&target);
    }
  }
  // The root of each architecture has no features, so there is always a generic candidate.
  const CpuTarget* best_generic = nullptr;
  for (const auto* target : compatible) {
    if (target->is_generic() && (best_generic == nullptr || deeper(*target, *best_generic))) {
      best_generic = target;
    }
  }
  if (!cpu_part.empty()) {
    const auto same_part = [&](const CpuTarget* t) { return t->cpu_part == cpu_part; };
    if (std::ranges::any_of(compatible, same_part)) {
      std::erase_if(compatible, [&](const CpuTarget* t) { return !same_part(t); });
    }
  }
  const CpuTarget* best = best_generic;
  for (const auto* target : compatible) {
    if (!target->is_generic() && target != best_generic && descends_from(*target, best_generic->name) &&
        (best == best_generic || deeper(*target, *best))) {
      best = target;
    }
  }
  return *best;
}

const CpuTarget* best_microarch(CpuArch arch, std::string_view vendor, const FeatureSet& features,
                                std::string_view cpu_part) {
  const auto& best = best_cpu_target(arch, vendor, features, cpu_part);
  return best.is_generic() ? nullptr : &best;
}

std::optional<NearMiss> nearest_missed_target(CpuArch arch, std::string_view vendor, const FeatureSet& features,
                                              std::string_view cpu_part, std::size_t max_missing) {
  const auto& best = best_cpu_target(arch, vendor, features, cpu_part);
  std::optional<NearMiss> nearest;
  for (const auto& target : cpu_targets()) {
    if (target.arch != arch || target.is_generic() || target.vendor != vendor || &target == &best ||
        !descends_from(target, best.name)) {
      continue;
    }
    auto check = cpu_target_compatible(target, vendor, features);
    const auto count = check.missing_features.size();
    if (count == 0 || count > max_missing) continue;
    if (!nearest || count < nearest->missing.size() ||
        (count == nearest->missing.size() && deeper(target, *nearest->target))) {
      nearest = NearMiss{&target, std::move(check.missing_features)};
    }
  }
  return nearest;
}

std::string x86_vendor_name(std::string_view cpuid_vendor) {
  const auto trimmed = util::trim(cpuid_vendor);
  for (const auto& [cpuid, name] : k_x86_vendors) {
    if (trimmed == cpuid) {
      return std::string(name);
    }
  }
  return std::string(trimmed);
}

std::string arm_vendor_name(std::string_view implementer) {
  const auto code = util::to_lower(util::trim(implementer));
  for (const auto& [hex, name] : k_arm_implementers) {
    if (code == hex) {
      return std::string(name);
    }
  }
  return code;
}

std::string cpu_vendor_name(std::string_view vendor) {
  const auto wanted = util::to_lower(util::trim(vendor));
  using Spellings = std::span<const VendorSpelling>;
  for (const auto table : {Spellings(k_x86_vendors), Spellings(k_arm_implementers)}) {
    for (const auto& [code, name] : table) {
      if (wanted == util::to_lower(code) || wanted == util::to_lower(name)) {
        return std::string(name);
      }
    }
  }
  return std::string(util::trim(vendor));
}

}  // namespace hwimg::hw
