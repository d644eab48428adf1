#pragma once
// Rule 3 (docs/selection.md#rule-3-gpu-code): every considered GPU is served by some target. On a
// node with mixed GPUs the reasons and `GpuFailure`s name the GPUs that are not.

#include <string>
#include <vector>

#include "hwimg/select/candidate.hpp"
#include "hwimg/select/host_view.hpp"

namespace hwimg::select {

// One considered GPU a variant cannot run on, and the reason (an entry of the verdict's reasons)
// that names it.
struct GpuFailure {
  HostGpu gpu;
  std::string reason;
};

struct GpuOutcome {
  hw::Serving worst{hw::ServeKind::arch_specific, 0};
  std::vector<hw::ComputeCapability> ptx_only;  // served, but only by PTX JIT
};

// Appends a reason per unserved compute capability ("GPU 1 (NVIDIA A100-SXM4-80GB): no code for
// compute capability 8.0 (has sm_90a)") and a failure per GPU.
[[nodiscard]] GpuOutcome check_gpu_code(const Requirements& req, const HostView& host,
                                        std::vector<std::string>& reasons, std::vector<GpuFailure>& failures);

// "sm_80, sm_90, compute_90".
[[nodiscard]] std::string target_list(const std::vector<hw::GpuTarget>& targets);

// "GPU 1 (NVIDIA A100-SXM4-80GB)", "GPUs 0, 2 (NVIDIA L4)", "GPU 0 (NVIDIA L4), GPU 3 (NVIDIA L40S)".
[[nodiscard]] std::string describe_gpus(const std::vector<HostGpu>& gpus);

}  // namespace hwimg::select
