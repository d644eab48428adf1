#include "hwimg/select/run_arguments.hpp"

#include <algorithm>

#include "hwimg/cdi/device_nodes.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::select {
namespace {

// NVIDIA's CDI kind (nvidia-ctk cdi generate), the names podman takes for toolkit GPUs.
constexpr std::string_view nvidia_cdi_kind = "nvidia.com/gpu";

void add_device_nodes(const Selection& selection, std::vector<std::string>& words) {
  for (const auto path : cdi::control_nodes) {
    words.insert(words.end(), {"--device", std::string(path)});
  }
  for (const auto& gpu : selection.host.gpus) {
    words.insert(words.end(), {"--device", cdi::gpu_node(gpu.index)});
  }
}

void add_toolkit(const GpuSelection& gpus, Runtime runtime, std::vector<std::string>& words) {
  const std::vector<std::string> all{"all"};
  const auto& names = gpus.choice == GpuChoice::all ? all : gpus.devices;
  if (runtime == Runtime::podman) {
    for (const auto& name : names) {
      words.insert(words.end(), {"--device", fmt::format("{}={}", nvidia_cdi_kind, name)});
    }
    return;
  }
  // docker reads --gpus as CSV: a list needs the quotes, which $(...) hands over as they are.
  const auto list = util::join(names, ",");
  words.insert(words.end(), {"--gpus", gpus.choice == GpuChoice::all ? list
                                       : names.size() == 1        ? "device=" + list
                                                                  : "\"device=" + list + "\""});
}

}  // namespace

GpuAccess gpu_access(const Verdict& verdict, const HostView& host) {
  const auto& needs = verdict.requirements;
  if (host.gpus.empty()) {
    return GpuAccess::none;
  }
  if (needs.bundled_driver) {
    return GpuAccess::device_nodes;
  }
  return needs.uses_gpu() || !needs.nvidia_require.empty() ? GpuAccess::toolkit : GpuAccess::none;
}

Result<std::vector<std::string>> run_arguments(const Selection& selection, const GpuSelection& gpus,
                                               std::string_view reference, Runtime runtime) {
  const auto* chosen = selection.chosen_verdict();
  if (chosen == nullptr) {
    return fail("failed to make run arguments: no variant was chosen");
  }
  std::vector<std::string> words;
  switch (gpu_access(*chosen, selection.host)) {
    case GpuAccess::none:
      break;
    case GpuAccess::toolkit:
      add_toolkit(gpus, runtime, words);
      break;
    case GpuAccess::device_nodes:
      if (const auto mig = std::ranges::find_if(gpus.devices, [](const auto& name) { return name.contains(':'); });
          mig != gpus.devices.end()) {
        return fail_usage("{} names MIG device {}, but variant {} bundles its driver and gets device nodes only, "
                          "which reach whole GPUs (docs/running.md#device-nodes)",
                          gpus.origin, *mig, chosen->requirements.name);
      }
      add_device_nodes(selection, words);
      break;
  }
  words.emplace_back(reference);
  for (const auto& word : words) {
    if (std::ranges::any_of(word, [](char c) { return c == ' ' || c == '\t' || c == '\n'; })) {
      return fail("failed to make run arguments: '{}' holds white space, which $(...) would split", word);
    }
  }
  return words;
}

}  // namespace hwimg::select
