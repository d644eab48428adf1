#include "hwimg/select/gpu_selection.hpp"

#include <algorithm>

#include "hwimg/util/strings.hpp"

namespace hwimg::select {
namespace {

constexpr std::string_view cdi_prefix = "nvidia.com/gpu=";

std::string describe_host_gpus(const probe::HostFacts& host) {
  if (!host.nvidia || host.nvidia->gpus.empty()) {
    return "this host has no NVIDIA GPU";
  }
  std::vector<std::string> names;
  for (const auto& gpu : host.nvidia->gpus) {
    names.push_back(fmt::format("{}: {}{}", gpu.index, gpu.name, gpu.uuid.empty() ? "" : " " + gpu.uuid));
  }
  return "this host has " + util::join(names, ", ");
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Result<GpuSelection> parse_gpu_selection(std::string_view text, std::string_view origin) {
  GpuSelection selection;
  selection.origin = std::string(origin);
  const auto trimmed = util::to_lower(util::trim(text));
  if (trimmed == "all" || trimmed == std::string(cdi_prefix) + "all") {
    return selection;
  }
  if (trimmed.empty() || trimmed == "none" || trimmed == "void") {
    selection.choice = GpuChoice::none;
    return selection;
  }
  selection.choice = GpuChoice::listed;
  for (const auto& part : util::split(text, ',')) {
    auto name = std::string(util::trim(part));
    if (name.starts_with(cdi_prefix)) {
      name.erase(0, cdi_prefix.size());
    }
    if (name.empty()) {
      return fail_usage("{}: empty GPU name in '{}' (expected all, none, or indexes/UUIDs such as 0,1)", origin,
                        text);
    }
    if (util::to_lower(name).starts_with("mig-")) {
      return fail_usage("{}: MIG device {} cannot be mapped to its GPU; name the GPU or <gpu>:<mig> instead", origin,
                        name);
    }
    selection.devices.push_back(std::move(name));
  }
  return selection;
}

Result<GpuSelection> choose_gpu_selection(const std::optional<std::string>& flag,
                                          const std::optional<std::string>& visible_devices) {
  if (flag) {
    return parse_gpu_selection(*flag, "--gpus");
  }
  if (visible_devices) {
    return parse_gpu_selection(*visible_devices, "NVIDIA_VISIBLE_DEVICES");
  }
  return GpuSelection{};
}

Result<std::vector<probe::GpuFacts>> considered_gpus(const GpuSelection& selection, const probe::HostFacts& host) {
  std::vector<probe::GpuFacts> gpus;
  if (selection.choice == GpuChoice::none || !host.nvidia) {
    if (selection.choice == GpuChoice::listed) {
      return fail_usage("{} names GPU {}, but {}", selection.origin, selection.devices.front(),
                        describe_host_gpus(host));
    }
    return gpus;
  }
  const auto& host_gpus = host.nvidia->gpus;
  if (selection.choice == GpuChoice::all) {
    return host_gpus;
  }
  std::vector<bool> chosen(host_gpus.size(), false);
  for (const auto& device : selection.devices) {
    // A MIG device "<gpu>:<mig>" is judged on its parent GPU, as libnvidia-container does.
    const auto gpu_part = device.substr(0, device.find(':'));
    const auto found = std::ranges::find_if(host_gpus, [&](const probe::GpuFacts& gpu) {
      return all_digits(gpu_part) ? std::to_string(gpu.index) == gpu_part
                                  : !gpu.uuid.empty() && util::to_lower(gpu.uuid) == util::to_lower(device);
    });
    if (found == host_gpus.end()) {
      return fail_usage("{} names GPU {}, but {}", selection.origin, device, describe_host_gpus(host));
    }
    chosen[static_cast<std::size_t>(found - host_gpus.begin())] = true;
  }
  for (std::size_t i = 0; i < host_gpus.size(); ++i) {
    if (chosen[i]) {
      gpus.push_back(host_gpus[i]);
    }
  }
  return gpus;
}

}  // namespace hwimg::select
