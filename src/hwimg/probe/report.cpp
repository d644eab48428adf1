#include "hwimg/probe/report.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/hw/gpu_target.hpp"
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

// Label prefixes: hwimg's own, NFD's (whose cpu source names the x86-64 levels) and GPU Feature
// Discovery's (docs/compatibility.md#nfd-labels).
constexpr std::string_view label_ns_hwimg = "hwimg.org";
constexpr std::string_view label_ns_nfd = "feature.node.kubernetes.io";
constexpr std::string_view label_ns_gfd = "nvidia.com";

void add_prefixed_label(std::string& out, std::string_view prefix, std::string_view name, std::string_view value) {
  if (valid_label_part(name) && valid_label_part(value)) {
    out += fmt::format("{}/{}={}\n", prefix, name, value);
  }
}

void add_label(std::string& out, std::string_view name, std::string_view value) {
  add_prefixed_label(out, label_ns_hwimg, name, value);
}

void add_hwimg_nvidia_labels(std::string& out, const NvidiaFacts& nvidia) {
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
}

// NFD's cumulative level flags, as its cpu source writes them since v0.19: X86_64_V1..X86_64_V<level>.
void add_nfd_level_labels(std::string& out, hw::X86Level level) {
  for (int number = 1; number <= static_cast<int>(level); ++number) {
    add_prefixed_label(out, label_ns_nfd, fmt::format("cpu-cpuid.X86_64_V{}", number), "true");
  }
}

// GFD's version labels: the driver "580.159.04" split at its dots (a two-part version gets an empty
// revision, as GFD writes it) and the newest CUDA the driver supports, "13.0".
void add_gfd_version_labels(std::string& out, const NvidiaFacts& nvidia) {
  if (nvidia.driver_version) {
    const auto parts = util::split(*nvidia.driver_version, '.');
    if (parts.size() == 2 || parts.size() == 3) {
      add_prefixed_label(out, label_ns_gfd, "cuda.driver-version.major", parts[0]);
      add_prefixed_label(out, label_ns_gfd, "cuda.driver-version.minor", parts[1]);
      if (parts.size() == 3) {
        add_prefixed_label(out, label_ns_gfd, "cuda.driver-version.revision", parts[2]);
      } else {
        out += fmt::format("{}/cuda.driver-version.revision=\n", label_ns_gfd);
      }
      add_prefixed_label(out, label_ns_gfd, "cuda.driver-version.full", *nvidia.driver_version);
    }
  }
  if (nvidia.cuda_driver_version) {
    const auto parts = util::split(*nvidia.cuda_driver_version, '.');
    if (parts.size() == 2) {
      add_prefixed_label(out, label_ns_gfd, "cuda.runtime-version.major", parts[0]);
      add_prefixed_label(out, label_ns_gfd, "cuda.runtime-version.minor", parts[1]);
      add_prefixed_label(out, label_ns_gfd, "cuda.runtime-version.full", *nvidia.cuda_driver_version);
    }
  }
}

// GFD labels one compute capability per node: on mixed nodes that of whichever model its labelers
// (a Go map) visit last. hwimg writes the lowest, which every GPU of the node reaches.
void add_gfd_compute_labels(std::string& out, const NvidiaFacts& nvidia) {
  std::optional<hw::ComputeCapability> lowest;
  for (const auto& gpu : nvidia.gpus) {
    const auto capability = gpu.compute_capability ? hw::parse_compute_capability(*gpu.compute_capability)
                                                   : std::nullopt;
    if (capability && (!lowest || *capability < *lowest)) {
      lowest = capability;
    }
  }
  if (lowest) {
    add_prefixed_label(out, label_ns_gfd, "gpu.compute.major", std::to_string(lowest->major));
    add_prefixed_label(out, label_ns_gfd, "gpu.compute.minor", std::to_string(lowest->minor));
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

// The named target ("(no named microarchitecture)" for none), and the deeper one that a few missing
// features keep out: always where no named target fits, and in a VM (`hypervisor`), whose
// hypervisor may hide them, beyond a named one; on bare metal a deeper target is a newer CPU.
// Nothing under HWIMG_OVERRIDE_CPU_LEVEL, whose generic CPU lacks them on purpose.
std::string target_line(const HostFacts& facts) {
  const auto& cpu = facts.cpu;
  const bool level_overridden = std::ranges::any_of(
      facts.overrides, [](const std::string& o) { return o.starts_with("HWIMG_OVERRIDE_CPU_LEVEL"); });
  const bool virtual_machine = std::ranges::find(cpu.features, "hypervisor") != cpu.features.end();
  const auto near = level_overridden || (cpu.microarch && !virtual_machine)
                        ? std::nullopt
                        : hw::nearest_missed_target(cpu.arch, cpu.vendor, hw::make_feature_set(cpu.features), cpu.cpu_part);
  const auto why_not = near ? fmt::format("{} also needs {}, which this CPU does not report", near->target->name,
                                          util::join(near->missing, ", "))
                            : std::string();
  if (cpu.microarch) return near ? fmt::format("{} ({})", *cpu.microarch, why_not) : *cpu.microarch;
  return near ? fmt::format("(no named microarchitecture: {})", why_not) : "(no named microarchitecture)";
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
  out += fmt::format("Target:    {}\n", target_line(facts));
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
    add_label(out, "cpu.level-num", std::to_string(static_cast<int>(*cpu.level)));
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
  if (facts.nvidia) {
    add_hwimg_nvidia_labels(out, *facts.nvidia);
  }
  // The same facts under the names NFD and GFD publish, for workloads written against those.
  if (cpu.level) {
    add_nfd_level_labels(out, *cpu.level);
  }
  if (facts.nvidia) {
    add_gfd_version_labels(out, *facts.nvidia);
    add_gfd_compute_labels(out, *facts.nvidia);
  }
  return out;
}

}  // namespace hwimg::probe
