#include "hwimg/probe/report.hpp"

#include <algorithm>
#include <set>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::probe {
namespace {

// Kubernetes label name/value syntax: at most 63 characters, [A-Za-z0-9] at both ends,
// [-A-Za-z0-9_.] inside (docs/compatibility.md#nfd-labels).
bool valid_label_part(std::string_view text) {
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (text.empty() || text.size() > 63 || !alnum(text.front()) || !alnum(text.back())) {
    return false;
  }
  return std::ranges::all_of(text, [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

void add_label(std::string& out, std::string_view name, std::string_view value) {
  if (valid_label_part(name) && valid_label_part(value)) {
    out += fmt::format("hwimg.org/{}={}\n", name, value);
  }
}

// The flags selection can ask for: those some level or named target of this architecture needs.
std::set<std::string, std::less<>> selection_features(hw::CpuArch arch) {
  std::set<std::string, std::less<>> names;
  for (const auto& target : hw::cpu_targets()) {
    if (target.arch != arch) {
      continue;
    }
    for (const auto& feature : target.features) {
      if (hw::is_instruction_set_feature(feature)) {
        names.insert(feature);
      }
    }
  }
  return names;
}

}  // namespace

std::string to_text(const HostFacts& facts) {
  const auto& cpu = facts.cpu;
  std::string out;
  out += fmt::format("CPU:       {}\n", cpu.model_name.empty() ? std::string("(no model name)") : cpu.model_name);
  out += fmt::format("           {} {}", hw::cpu_arch_name(cpu.arch), cpu.vendor);
  if (cpu.family && cpu.model) {
    out += fmt::format(", family {} model {}", *cpu.family, *cpu.model);
  }
  out += "\n";
  if (cpu.level) {
    out += fmt::format("Level:     {}\n", hw::x86_level_name(*cpu.level));
  }
  out += fmt::format("Target:    {}\n", cpu.microarch.value_or("(no named microarchitecture)"));
  out += fmt::format("Features:  {}\n", util::join(cpu.features, " "));
  if (!facts.overrides.empty()) {
    out += fmt::format("Overrides: {}\n", util::join(facts.overrides, " "));
  }
  if (!facts.nvidia) {
    out += "NVIDIA:    no driver\n";
    return out;
  }
  const auto& nvidia = *facts.nvidia;
  out += fmt::format("NVIDIA:    driver {}, CUDA {} (from {})\n", nvidia.driver_version.value_or("unknown"),
                     nvidia.cuda_driver_version.value_or("unknown"), nvidia.source);
  for (const auto& gpu : nvidia.gpus) {
    out += fmt::format("GPU {}:     {}, compute capability {}", gpu.index, gpu.name.empty() ? "(no name)" : gpu.name,
                       gpu.compute_capability.value_or("unknown"));
    if (gpu.memory_mib) {
      out += fmt::format(", {} MiB", *gpu.memory_mib);
    }
    if (!gpu.uuid.empty()) {
      out += fmt::format(", {}", gpu.uuid);
    }
    out += "\n";
  }
  return out;
}

std::string to_nfd(const HostFacts& facts) {
  const auto& cpu = facts.cpu;
  std::string out = "# Node Feature Discovery local features, written by hwimg probe --format nfd\n";
  add_label(out, "cpu.arch", hw::cpu_arch_name(cpu.arch));
  add_label(out, "cpu.vendor", cpu.vendor);
  if (cpu.level) {
    add_label(out, "cpu.level", hw::x86_level_name(*cpu.level));
  }
  if (cpu.microarch) {
    add_label(out, "cpu.target", *cpu.microarch);
  }
  const auto wanted = selection_features(cpu.arch);
  for (const auto& feature : cpu.features) {
    if (wanted.contains(feature)) {
      add_label(out, "cpu." + feature, "true");
    }
  }
  if (!facts.nvidia) {
    return out;
  }
  const auto& nvidia = *facts.nvidia;
  if (nvidia.driver_version) {
    add_label(out, "nvidia.driver", *nvidia.driver_version);
  }
  if (nvidia.cuda_driver_version) {
    add_label(out, "nvidia.cuda", *nvidia.cuda_driver_version);
  }
  add_label(out, "nvidia.gpu.count", std::to_string(nvidia.gpus.size()));
  std::set<std::string> capabilities;
  for (const auto& gpu : nvidia.gpus) {
    if (gpu.compute_capability) {
      capabilities.insert(*gpu.compute_capability);
    }
  }
  for (const auto& capability : capabilities) {
    add_label(out, "nvidia.gpu.compute-capability." + capability, "true");
  }
  return out;
}

}  // namespace hwimg::probe
