#pragma once
// NVIDIA facts from the CUDA driver API (libcuda.so.1): cuDriverGetVersion, then cuInit and per
// device its name, UUID, memory and compute capability (attributes 75/76). cuInit can take
// seconds or hang: call it only inside run_in_child.

#include <string>

#include "hwimg/probe/nvidia_nvml.hpp"

namespace hwimg::probe {

[[nodiscard]] Result<NvidiaFacts> query_cuda(const std::string& library, const StepLog& log);

}  // namespace hwimg::probe
