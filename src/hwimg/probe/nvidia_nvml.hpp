#pragma once
// NVIDIA facts from NVML (libnvidia-ml.so.1): driver and CUDA driver version, and per GPU its
// name, UUID, compute capability, brand and memory. Functions an older driver lacks are skipped.
// Loads the driver: call it only inside run_in_child.

#include <functional>
#include <string>
#include <string_view>

#include "hwimg/probe/host_facts.hpp"

namespace hwimg::probe {

using StepLog = std::function<void(std::string_view)>;

[[nodiscard]] Result<NvidiaFacts> query_nvml(const std::string& library, const StepLog& log);

// NVML's brand enum as nvidia-smi spells it; unknown values as their number.
[[nodiscard]] std::string nvml_brand_name(int brand);

}  // namespace hwimg::probe
