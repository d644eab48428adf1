#include "hwimg/probe/overrides.hpp"

#include <algorithm>

#include "hwimg/util/strings.hpp"

namespace hwimg::probe {
namespace {

constexpr std::string_view capability_variable = "HWIMG_OVERRIDE_COMPUTE_CAPABILITY";
constexpr std::string_view level_variable = "HWIMG_OVERRIDE_CPU_LEVEL";

// What a misspelt capability most likely meant: "sm_90a", "compute_90" and "90" give "9.0".
std::string capability_suggestion(std::string_view entry) {
  for (const auto prefix : {std::string_view("sm_"), std::string_view("compute_")}) {
    if (entry.starts_with(prefix)) {
      entry.remove_prefix(prefix.size());
    }
  }
  if (!entry.empty() && (entry.back() == 'a' || entry.back() == 'f')) {
    entry.remove_suffix(1);
  }
  const bool digits = !entry.empty() && entry.size() <= 3 &&
                      std::ranges::all_of(entry, [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    return {};
  }
  const auto text = entry.size() == 1 ? std::string(entry) + ".0"
                                      : fmt::format("{}.{}", entry.substr(0, entry.size() - 1), entry.back());
  return hw::parse_compute_capability(text) ? fmt::format(" (did you mean \"{}\"?)", text) : std::string();
}

std::vector<std::string> generic_level_names() {
  std::vector<std::string> names;
  for (const auto& target : hw::cpu_targets()) {
    if (target.is_generic()) {
      names.emplace_back(target.name);
    }
  }
  return names;
}

// The generic level a named microarchitecture belongs to, for the error that refuses it.
std::string level_of(const hw::CpuTarget& target) {
  if (target.arch == hw::CpuArch::amd64) {
    return hw::x86_level_name(target.level);
  }
  const hw::CpuTarget* deepest = nullptr;  // of the generic ancestors
  for (const auto ancestor : target.ancestors) {
    const auto* parent = hw::find_cpu_target(ancestor);
    if (parent != nullptr && parent->is_generic() &&
        (deepest == nullptr || hw::ancestor_count(*parent) > hw::ancestor_count(*deepest))) {
      deepest = parent;
    }
  }
  return deepest == nullptr ? std::string("aarch64") : std::string(deepest->name);
}

}  // namespace

Result<std::vector<hw::ComputeCapability>> parse_compute_capability_override(std::string_view text) {
  std::vector<hw::ComputeCapability> capabilities;
  if (util::trim(text).empty()) {
    return capabilities;
  }
  for (const auto& part : util::split(text, ',')) {
    const auto entry = util::trim(part);
    const auto capability = hw::parse_compute_capability(entry);
    if (!capability) {
      return fail_usage("failed to read {}: expected compute capabilities such as \"9.0\" or \"8.0,9.0\" (one per "
                        "GPU), or nothing for no GPU, got \"{}\"{}",
                        capability_variable, text, capability_suggestion(entry));
    }
    capabilities.push_back(*capability);
  }
  return capabilities;
}

Result<const hw::CpuTarget*> parse_cpu_level_override(std::string_view text) {
  const auto name = util::trim(text);
  const auto* target = hw::find_cpu_target(name);
  if (target == nullptr) {
    return fail_usage("failed to read {}: expected a CPU level such as \"x86-64-v3\" or \"armv8.2a\", got \"{}\"{}",
                      level_variable, text, util::did_you_mean(name, generic_level_names()));
  }
  if (!target->is_generic()) {
    return fail_usage("failed to read {}: \"{}\" is a microarchitecture, not a level (did you mean {}?)",
                      level_variable, text, level_of(*target));
  }
  return target;
}

Result<void> apply_cpu_level_override(CpuFacts& cpu, const hw::CpuTarget& level) {
  if (level.arch != cpu.arch) {
    return fail_usage("failed to read {}: {} is an {} level; this host is {}", level_variable, level.name,
                      hw::cpu_arch_name(level.arch), hw::cpu_arch_name(cpu.arch));
  }
  cpu.features.assign(level.features.begin(), level.features.end());
  cpu.level = cpu.arch == hw::CpuArch::amd64 ? std::optional(level.level) : std::nullopt;
  cpu.microarch.reset();
  return {};
}

void apply_compute_capability_override(std::optional<NvidiaFacts>& nvidia,
                                       const std::vector<hw::ComputeCapability>& capabilities) {
  if (!nvidia) {
    if (capabilities.empty()) {
      return;
    }
    nvidia = NvidiaFacts{.driver_version = std::nullopt, .cuda_driver_version = std::nullopt, .source = "override",
                         .gpus = {}};
  }
  std::vector<GpuFacts> gpus;
  for (std::size_t i = 0; i < capabilities.size(); ++i) {
    GpuFacts gpu;
    if (i < nvidia->gpus.size()) {
      gpu = nvidia->gpus[i];
    } else {
      gpu.index = static_cast<int>(i);
    }
    gpu.compute_capability = capabilities[i].str();
    gpus.push_back(std::move(gpu));
  }
  nvidia->gpus = std::move(gpus);
}

std::string capability_list_text(const std::vector<hw::ComputeCapability>& capabilities) {
  std::vector<std::string> names;
  for (const auto& capability : capabilities) {
    names.push_back(capability.str());
  }
  return util::join(names, ",");
}

}  // namespace hwimg::probe
