#include "hwimg/hw/gpu_target.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "hwimg/hw/detail/gpu_target_table.hpp"
#include "hwimg/hw/target_hints.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::hw {

namespace {

char suffix_of(ArchFeatures features) {
  switch (features) {
    case ArchFeatures::family: return 'f';
    case ArchFeatures::arch_specific: return 'a';
    case ArchFeatures::baseline: break;
  }
  return '\0';
}

std::string target_name(CodeKind kind, int number, ArchFeatures features) {
  std::string name = fmt::format("{}_{}", kind == CodeKind::sass ? "sm" : "compute", number);
  if (const char suffix = suffix_of(features)) {
    name += suffix;
  }
  return name;
}

const detail::TargetSupportRow* find_support(const GpuTarget& target) {
  const auto rows = detail::target_support_rows();
  const auto found = std::ranges::find_if(rows, [&](const detail::TargetSupportRow& row) {
    return row.number == target.capability.number() && row.features == target.features;
  });
  return found == rows.end() ? nullptr : &*found;
}

// Syntax only: "sm_" or "compute_", two or three digits, an optional "a" or "f".
std::optional<GpuTarget> parse_target_syntax(std::string_view name) {
  GpuTarget target;
  if (name.starts_with("sm_")) {
    name.remove_prefix(3);
  } else if (name.starts_with("compute_")) {
    target.kind = CodeKind::ptx;
    name.remove_prefix(8);
  } else {
    return std::nullopt;
  }
  if (name.ends_with('a') || name.ends_with('f')) {
    target.features = name.back() == 'a' ? ArchFeatures::arch_specific : ArchFeatures::family;
    name.remove_suffix(1);
  }
  if (name.size() < 2 || name.size() > 3 || name.front() == '0' ||
      !std::ranges::all_of(name, [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int number = 0;
  std::from_chars(name.data(), name.data() + name.size(), number);
  target.capability = {number / 10, number % 10};
  return target;
}

std::optional<CudaVersion> last_toolkit_before(CudaVersion version) {
  std::optional<CudaVersion> last;
  for (const auto& toolkit : cuda_toolkit_versions()) {
    if (toolkit < version) {
      last = toolkit;
    }
  }
  return last;
}

}  // namespace

std::string ComputeCapability::str() const { return fmt::format("{}.{}", major, minor); }

std::optional<ComputeCapability> parse_compute_capability(std::string_view text) {
  const auto version = parse_cuda_version(text);
  if (!version || version->minor > 9) {
    return std::nullopt;
  }
  return ComputeCapability{version->major, version->minor};
}

std::strong_ordering GpuTarget::operator<=>(const GpuTarget& other) const {
  if (const auto order = capability <=> other.capability; order != 0) {
    return order;
  }
  if (const auto order = features <=> other.features; order != 0) {
    return order;
  }
  return kind <=> other.kind;
}

std::string GpuTarget::name() const { return target_name(kind, capability.number(), features); }

std::vector<std::string> gpu_target_names() {
  std::vector<std::string> names;
  for (const auto kind : {CodeKind::sass, CodeKind::ptx}) {
    for (const auto& row : detail::target_support_rows()) {
      names.push_back(target_name(kind, row.number, row.features));
    }
  }
  return names;
}

Result<GpuTarget> parse_gpu_target(std::string_view name) {
  const auto target = parse_target_syntax(name);
  if (target && find_support(*target)) {
    return *target;
  }
  if (target && target->features == ArchFeatures::family && target->capability.major < 10) {
    const GpuTarget specific{target->kind, target->capability, ArchFeatures::arch_specific};
    const GpuTarget baseline{target->kind, target->capability, ArchFeatures::baseline};
    const auto suggestion = find_support(specific) ? specific : baseline;
    return fail("unknown GPU target '{}': family (f) targets exist only for compute capability 10.0 "
                "and newer (did you mean {}?)",
                name, suggestion.name());
  }
  if (target && target->features == ArchFeatures::arch_specific && target->capability.major < 9) {
    const GpuTarget baseline{target->kind, target->capability, ArchFeatures::baseline};
    return fail("unknown GPU target '{}': arch-specific (a) targets exist only for compute "
                "capability 9.0 and newer (did you mean {}?)",
                name, baseline.name());
  }
  return fail("unknown GPU target '{}'{}", name, gpu_target_hint(name));
}

std::string join_target_names(std::span<const GpuTarget> targets) {
  std::vector<std::string> names;
  for (const auto& target : targets) {
    names.push_back(target.name());
  }
  return util::join(names, ",");
}

Result<void> check_toolkit_supports(CudaVersion toolkit, const GpuTarget& target) {
  const auto* support = find_support(target);
  if (!support) {
    return fail("unknown GPU target '{}'", target.name());
  }
  if (toolkit < support->first) {
    return fail("{} needs CUDA {} or newer", target.name(), support->first.str());
  }
  if (support->removed_in && toolkit >= *support->removed_in) {
    if (!support->renamed_to.empty()) {
      return fail("CUDA {} renamed {} to {}_{}", support->removed_in->str(), target.name(),
                  target.kind == CodeKind::sass ? "sm" : "compute", support->renamed_to);
    }
    const auto last = last_toolkit_before(*support->removed_in);
    return fail("CUDA {} dropped {}; the last toolkit for it is CUDA {}", support->removed_in->str(),
                target.name(), last ? last->str() : "?");
  }
  return {};
}

std::span<const ComputeCapability> family_members(ComputeCapability family) {
  for (const auto& entry : detail::target_family_rows()) {
    if (entry.target == family) {
      return std::span(entry.members).first(entry.count);
    }
  }
  return {};
}

std::strong_ordering Serving::operator<=>(const Serving& other) const {
  // ServeKind lists the best first, so a smaller enumerator is the better serving.
  if (kind != other.kind) {
    return other.kind <=> kind;
  }
  return other.minor_distance <=> minor_distance;
}

Serving serve(const GpuTarget& target, ComputeCapability device) {
  const auto& cc = target.capability;
  const auto in_family = [&] { return std::ranges::find(family_members(cc), device) != family_members(cc).end(); };
  if (target.kind == CodeKind::ptx) {
    const bool jit = target.features == ArchFeatures::baseline        ? device >= cc
                     : target.features == ArchFeatures::arch_specific ? device == cc
                                                                      : in_family();
    return jit ? Serving{ServeKind::ptx_jit, 0} : Serving{};
  }
  switch (target.features) {
    case ArchFeatures::arch_specific:
      return device == cc ? Serving{ServeKind::arch_specific, 0} : Serving{};
    case ArchFeatures::family:
      return in_family() ? Serving{ServeKind::family, 0} : Serving{};
    case ArchFeatures::baseline:
      break;
  }
  if (device.major != cc.major || device.minor < cc.minor) {
    return {};
  }
  if (device.minor == cc.minor) {
    return {ServeKind::sass_same, 0};
  }
  return {ServeKind::sass_lower_minor, device.minor - cc.minor};
}

Serving best_serving(std::span<const GpuTarget> targets, ComputeCapability device) {
  Serving best;
  for (const auto& target : targets) {
    best = std::max(best, serve(target, device));
  }
  return best;
}

std::string_view serve_kind_name(ServeKind kind) {
  switch (kind) {
    case ServeKind::arch_specific: return "arch-specific SASS";
    case ServeKind::family: return "family SASS";
    case ServeKind::sass_same: return "SASS";
    case ServeKind::sass_lower_minor: return "SASS of a lower minor";
    case ServeKind::ptx_jit: return "PTX JIT";
    case ServeKind::none: break;
  }
  return "no code";
}

std::vector<CapabilityRange> served_capabilities(const GpuTarget& target) {
  const auto& cc = target.capability;
  const auto exactly = [](ComputeCapability c) { return CapabilityRange{c, ComputeCapability{c.major, c.minor + 1}}; };
  switch (target.features) {
    case ArchFeatures::arch_specific:
      return {exactly(cc)};
    case ArchFeatures::family: {
      std::vector<CapabilityRange> ranges;
      for (const auto& member : family_members(cc)) {
        ranges.push_back(exactly(member));
      }
      return ranges;
    }
    case ArchFeatures::baseline:
      break;
  }
  if (target.kind == CodeKind::ptx) {
    return {CapabilityRange{cc, std::nullopt}};
  }
  return {CapabilityRange{cc, ComputeCapability{cc.major + 1, 0}}};
}

}  // namespace hwimg::hw
