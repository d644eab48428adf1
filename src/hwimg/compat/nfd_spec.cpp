#include "hwimg/compat/nfd_spec.hpp"

#include <set>
#include <vector>

#include <fmt/format.h>

#include "hwimg/compat/nfd_cpuid.hpp"
#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/hw/cuda_release.hpp"
#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::compat {
namespace {

namespace key = oci::annotation;

// The labels `hwimg probe --format nfd` writes (docs/selection.md#nfd-labels); NFD's local source
// publishes them as elements of the `local.label` feature (docs/nfd.md#the-spec).
constexpr std::string_view label_cuda = "hwimg.org/nvidia.cuda";
constexpr std::string_view label_driver = "hwimg.org/nvidia.driver";
constexpr std::string_view label_capability_prefix = "hwimg.org/nvidia.gpu.compute-capability.";

// A double-quoted YAML scalar: JSON escaping is valid YAML, and quoting keeps "0300" and "12.8"
// strings, where YAML 1.1 would read a number.
std::string yaml_quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string yaml_quoted_list(const std::vector<std::string>& values) {
  std::vector<std::string> items;
  for (const auto& value : values) items.push_back(yaml_quoted(value));
  return "[" + util::join(items, ", ") + "]";
}

// One `matchFeatures` term: the feature, an optional matchName and the matchExpressions lines.
struct Term {
  std::string feature{};
  std::vector<std::string> lines{};  // "KEY: {op: ...}" (or a "# ..." comment)
  std::string match_name{};          // "{op: In, value: [...]}"; empty: none
};

struct Rule {
  std::string name;
  std::vector<Term> terms;
};

std::string expression(std::string_view name, std::string_view op, const std::vector<std::string>& values = {},
                       std::string_view type = {}) {
  auto out = fmt::format("{}: {{op: {}", name, op);
  if (!values.empty()) out += ", value: " + yaml_quoted_list(values);
  if (!type.empty()) out += fmt::format(", type: {}", type);
  return out + "}";
}

Result<std::optional<Rule>> cpu_rule(const oci::Annotations& pairs, const std::optional<oci::Platform>& platform) {
  const auto level_name = pairs.contains(std::string(key::cpu_level)) ? pairs.at(std::string(key::cpu_level)) : "";
  const auto target_name = pairs.contains(std::string(key::cpu_target)) ? pairs.at(std::string(key::cpu_target)) : "";
  const auto platform_arch = platform ? hw::parse_cpu_arch(platform->architecture) : std::nullopt;
  const bool platform_amd64 = platform_arch && *platform_arch == hw::CpuArch::amd64;
  const bool platform_arm64 = platform_arch && *platform_arch == hw::CpuArch::arm64;
  std::optional<hw::X86Level> level = hw::parse_x86_level(level_name);
  if (!level_name.empty() && !level && !hw::find_cpu_target(level_name)) {
    return fail("unknown CPU level \"{}\" in {}", level_name, key::cpu_level);
  }
  if (level_name.empty() && platform_amd64) {
    level = hw::x86_level_from_oci_variant(platform->variant);
  }
  const hw::CpuTarget* target = nullptr;
  if (!target_name.empty()) {
    target = hw::find_cpu_target(target_name);
    if (!target) return fail("unknown CPU target \"{}\" in {}", target_name, key::cpu_target);
  } else if (!level && !level_name.empty()) {
    target = hw::find_cpu_target(level_name);  // an arm64 level, whose features NFD has no name for
  }
  if (!level && !target && !platform_amd64 && !platform_arm64) return std::optional<Rule>();
  const auto cpu_arch = level    ? hw::CpuArch::amd64
                        : target ? target->arch
                                 : (platform_arm64 ? hw::CpuArch::arm64 : hw::CpuArch::amd64);

  hw::FeatureSet needed;
  if (target) {
    for (const auto& feature : target->features) {
      if (hw::is_instruction_set_feature(feature)) needed.insert(feature);
    }
  }
  if (const auto it = pairs.find(std::string(key::cpu_features)); it != pairs.end()) {
    for (const auto& feature : util::split(it->second, ',')) {
      if (!util::trim(feature).empty()) needed.insert(hw::canonical_feature_name(util::trim(feature)));
    }
  }
  if (level) {
    for (const auto& feature : hw::x86_level_features(*level)) needed.erase(feature);
  }
  std::set<std::string> flags;
  std::vector<std::string> unnamed;
  for (const auto& feature : needed) {
    if (const auto flag = nfd_cpuid_flag(cpu_arch, feature)) {
      flags.insert(std::string(*flag));
    } else {
      unnamed.push_back(feature);
    }
  }
  Rule rule{"cpu", {}};
  Term cpuid{"cpu.cpuid", {}};
  if (level) cpuid.lines.push_back(expression(fmt::format("X86_64_V{}", hw::x86_level_number(*level)), "Exists"));
  for (const auto& flag : flags) cpuid.lines.push_back(expression(flag, "Exists"));
  if (!unnamed.empty()) {
    cpuid.lines.push_back(fmt::format("# also needed, no NFD cpu.cpuid flag: {}", util::join(unnamed, ", ")));
  }
  if (!cpuid.lines.empty()) rule.terms.push_back(std::move(cpuid));
  if (target && !target->is_generic()) {
    rule.terms.push_back({"cpu.model", {expression("vendor_id", "In", {std::string(target->vendor)})}});
  }
  if (rule.terms.empty()) return std::optional<Rule>();
  return std::optional<Rule>(std::move(rule));
}

// Every compute capability some target names: the ones a label can carry that hwimg knows.
std::set<hw::ComputeCapability> known_capabilities() {
  std::set<hw::ComputeCapability> out;
  for (const auto& name : hw::gpu_target_names()) {
    if (const auto target = hw::parse_gpu_target(name)) out.insert(target->capability);
  }
  return out;
}

Result<std::vector<Rule>> gpu_rules(const oci::Annotations& pairs) {
  std::vector<Rule> rules;
  const auto targets_text = pairs.find(std::string(key::gpu_targets));
  const auto cuda_text = pairs.find(std::string(key::cuda_version));
  const auto bundled = pairs.find(std::string(key::driver_bundled));
  if (targets_text != pairs.end() || cuda_text != pairs.end()) {
    // Data-center GPUs are 3D controllers (0302), others VGA controllers (0300).
    rules.push_back({"nvidia-gpu",
                     {{"pci.device", {expression("class", "In", {"0300", "0302"}),
                                      expression("vendor", "In", {"10de"})}}}});
  }
  if (cuda_text != pairs.end()) {
    const auto cuda = hw::parse_cuda_version(cuda_text->second);
    if (!cuda) return fail("\"{}\" in {} is not a CUDA version M.m", cuda_text->second, key::cuda_version);
    rules.push_back({"cuda-driver", {{"local.label", {expression(label_cuda, "Ge", {cuda->str()}, "version")}}}});
  }
  if (targets_text != pairs.end()) {
    std::vector<hw::GpuTarget> targets;
    for (const auto& name : util::split(targets_text->second, ',')) {
      HWIMG_TRY_ASSIGN(targets.emplace_back(), hw::parse_gpu_target(util::trim(name)));
    }
    std::vector<std::string> served;
    Term term{"local.label", {}};
    for (const auto& capability : known_capabilities()) {
      const auto label = std::string(label_capability_prefix) + capability.str();
      if (hw::best_serving(targets, capability).serves()) {
        served.push_back(label);
      } else {
        term.lines.push_back(expression(label, "DoesNotExist"));
      }
    }
    // Some GPU is served (matchName), and no GPU of a capability the code does not serve is there.
    term.match_name = fmt::format("{{op: In, value: {}}}", yaml_quoted_list(served));
    rules.push_back({"gpu-code", {std::move(term)}});
  }
  if (bundled != pairs.end()) {
    rules.push_back({"bundled-driver", {{"local.label", {expression(label_driver, "In", {bundled->second})}}}});
  }
  return rules;
}

std::string render(std::string_view description, const std::vector<Rule>& rules) {
  std::string out = fmt::format("version: {}\ncompatibilities:\n- description: {}\n", nfd_spec_version,
                                yaml_quoted(description));
  if (rules.empty()) return out + "  rules: []\n";
  out += "  rules:\n";
  for (const auto& rule : rules) {
    out += fmt::format("  - name: {}\n    matchFeatures:\n", yaml_quoted(rule.name));
    for (const auto& term : rule.terms) {
      out += fmt::format("    - feature: {}\n", term.feature);
      if (!term.match_name.empty()) out += fmt::format("      matchName: {}\n", term.match_name);
      if (!term.lines.empty()) out += "      matchExpressions:\n";
      for (const auto& line : term.lines) out += fmt::format("        {}\n", line);
    }
  }
  return out;
}

}  // namespace

Result<std::string> nfd_spec_yaml(const oci::Descriptor& variant) {
  const auto pairs = key::hwimg_pairs(variant.annotations);
  const auto id = variant.annotation(key::variant).value_or(variant.digest.str());
  const auto what = fmt::format("describe variant {} for NFD", id);
  HWIMG_TRY_ASSIGN(auto cpu, with_context(cpu_rule(pairs, variant.platform), "failed to " + what));
  HWIMG_TRY_ASSIGN(auto gpu, with_context(gpu_rules(pairs), "failed to " + what));
  std::vector<Rule> rules;
  if (cpu) rules.push_back(std::move(*cpu));
  for (auto& rule : gpu) rules.push_back(std::move(rule));
  return render(fmt::format("hwimg variant {}", id), rules);
}

}  // namespace hwimg::compat
