#pragma once
// HWIMG_OVERRIDE_COMPUTE_CAPABILITY and HWIMG_OVERRIDE_CPU_LEVEL (docs/selection.md#overrides): like
// conda's CONDA_OVERRIDE_CUDA, they replace what the probe found, for tests and for hosts it misreads.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/probe/host_facts.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::probe {

// "9.0", or one capability per GPU ("8.0,9.0"); "" is no GPU. A usage error suggests the spelling
// meant ("sm_90" -> "9.0").
[[nodiscard]] Result<std::vector<hw::ComputeCapability>> parse_compute_capability_override(std::string_view text);

// A generic level: "x86-64-v1" ... "x86-64-v4" (archspec's "x86_64_v3" too) or an arm64 one
// ("armv8.2a"). A microarchitecture ("zen4") is a usage error naming its level.
[[nodiscard]] Result<const hw::CpuTarget*> parse_cpu_level_override(std::string_view text);

// The CPU becomes a generic CPU of `level`: the level's features, no named microarchitecture. A
// level of the other architecture is a usage error.
[[nodiscard]] Result<void> apply_cpu_level_override(CpuFacts& cpu, const hw::CpuTarget& level);

// One GPU per capability, in order; probed GPUs keep their name and UUID where the list reaches
// them and are dropped beyond it. GPUs on a host without a driver get facts with source "override".
void apply_compute_capability_override(std::optional<NvidiaFacts>& nvidia,
                                       const std::vector<hw::ComputeCapability>& capabilities);

// "8.0,9.0": the override's value as the environment gives it.
[[nodiscard]] std::string capability_list_text(const std::vector<hw::ComputeCapability>& capabilities);

}  // namespace hwimg::probe
