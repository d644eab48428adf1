#pragma once
// Which GPUs the container will get (`--gpus`, or NVIDIA_VISIBLE_DEVICES as the NVIDIA runtime
// reads it, docs/compatibility.md#nvidia-visible-devices): the GPUs the rules judge a variant on.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/probe/host_facts.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::select {

enum class GpuChoice { all, none, listed };

struct GpuSelection {
  GpuChoice choice = GpuChoice::all;
  std::vector<std::string> devices;  // listed: indexes ("0"), UUIDs ("GPU-…") or "<gpu>:<mig>"

  // How the selection came to be, for explanations: "--gpus", "NVIDIA_VISIBLE_DEVICES" or "default".
  std::string origin = "default";
};

// "all", "none", "void", "" (none), or a comma list; CDI names (nvidia.com/gpu=0) are accepted.
[[nodiscard]] Result<GpuSelection> parse_gpu_selection(std::string_view text, std::string_view origin);

// --gpus when given, else NVIDIA_VISIBLE_DEVICES when set (`visible_devices`), else all.
[[nodiscard]] Result<GpuSelection> choose_gpu_selection(const std::optional<std::string>& flag,
                                                        const std::optional<std::string>& visible_devices);

// The host's GPUs that the selection names, in host order, each once. A name the host does not
// have is a usage error listing the GPUs it has.
[[nodiscard]] Result<std::vector<probe::GpuFacts>> considered_gpus(const GpuSelection& selection,
                                                                   const probe::HostFacts& host);

}  // namespace hwimg::select
