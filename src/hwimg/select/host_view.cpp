#include "hwimg/select/host_view.hpp"

#include "hwimg/util/strings.hpp"

namespace hwimg::select {

HostView make_host_view(const probe::HostFacts& facts, const std::vector<probe::GpuFacts>& considered,
                        const GpuSelection& selection) {
  HostView host;
  host.os = facts.os;
  host.arch = std::string(hw::cpu_arch_name(facts.cpu.arch));
  host.vendor = facts.cpu.vendor;
  host.features = hw::make_feature_set(facts.cpu.features);
  if (facts.cpu.arch == hw::CpuArch::amd64) {
    host.x86_level = facts.cpu.level.value_or(hw::x86_level_of(host.features));
    // A facts file may list a few features beside its level; the level implies the rest.
    host.features.merge(hw::x86_level_features(*host.x86_level));
  }
  host.cpu_name = facts.cpu.microarch ? *facts.cpu.microarch
                  : host.x86_level    ? hw::x86_level_name(*host.x86_level)
                                      : host.arch;
  if (facts.nvidia) {
    host.has_driver = true;
    if (facts.nvidia->driver_version) {
      host.driver = hw::DriverVersion::parse(*facts.nvidia->driver_version);
    }
    if (facts.nvidia->cuda_driver_version) {
      host.cuda = hw::parse_cuda_version(*facts.nvidia->cuda_driver_version);
    }
    if (!host.cuda && host.driver) {
      host.cuda = hw::cuda_version_of_driver(*host.driver);
    }
  }
  for (const auto& gpu : considered) {
    HostGpu view{gpu.index, gpu.uuid, gpu.name, std::nullopt, gpu.brand.value_or("")};
    if (gpu.compute_capability) {
      view.capability = hw::parse_compute_capability(*gpu.compute_capability);
    }
    host.gpus.push_back(std::move(view));
  }
  host.choice = selection.choice;
  host.gpu_origin = selection.origin;
  host.overrides = facts.overrides;
  return host;
}

std::string describe_host(const HostView& host) {
  const auto overrides = host.overrides.empty() ? std::string() : "; overrides: " + util::join(host.overrides, ", ");
  auto text = fmt::format("{}/{} {}", host.os, host.arch, host.cpu_name);
  if (!host.vendor.empty()) {
    text += fmt::format(" ({})", host.vendor);
  }
  if (!host.has_driver) {
    return text + "; no NVIDIA driver" + overrides;
  }
  text += fmt::format("; NVIDIA driver {}, CUDA {}", host.driver ? host.driver->str() : std::string("unknown"),
                      host.cuda ? host.cuda->str() : std::string("unknown"));
  std::vector<std::string> gpus;
  for (const auto& gpu : host.gpus) {
    gpus.push_back(fmt::format("{}{} ({})", gpu.index, gpu.name.empty() ? "" : " " + gpu.name,
                               gpu.capability ? gpu.capability->str() : "?"));
  }
  return text + fmt::format("; GPUs considered ({}): {}", host.gpu_origin, gpus.empty() ? "none" : util::join(gpus, ", ")) +
         overrides;
}

}  // namespace hwimg::select
