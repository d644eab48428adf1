#pragma once
// `hwimg probe`: what this host can run. CPU facts from CPUID/XGETBV (amd64) or hwcaps (arm64);
// NVIDIA facts from NVML, then the CUDA driver API, then procfs, each library in a child process
// with a deadline.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/probe/host_facts.hpp"
#include "hwimg/probe/x86_cpuid.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::probe {

// The seams tests and users control; commands/environment.cpp fills them from HWIMG_* variables.
struct ProbeOptions {
  std::filesystem::path proc_root = "/proc";        // HWIMG_PROC_ROOT
  std::filesystem::path sys_root = "/sys";          // HWIMG_SYS_ROOT
  std::string nvml_library = "libnvidia-ml.so.1";   // HWIMG_NVML_LIBRARY
  std::string cuda_library = "libcuda.so.1";        // HWIMG_CUDA_LIBRARY
  // HWIMG_OVERRIDE_CUDA, like conda's CONDA_OVERRIDE_CUDA: "" means no CUDA at all, "12.4" sets
  // the CUDA driver version (and reports it even without a driver).
  std::optional<std::string> cuda_override;
  // HWIMG_OVERRIDE_COMPUTE_CAPABILITY: one GPU per capability ("8.0,9.0"), none when empty.
  std::optional<std::vector<hw::ComputeCapability>> compute_capability_override;
  const hw::CpuTarget* cpu_level_override = nullptr;  // HWIMG_OVERRIDE_CPU_LEVEL: a generic level
  // HWIMG_CPUID_FILE: an x86 CPU's recorded CPUID/XGETBV values (`hwimg probe --cpuid-dump`),
  // decoded instead of this CPU's, so a recorded Intel or AMD CPU is probed on any machine.
  std::optional<CpuidSnapshot> cpuid;
  std::filesystem::path cpuid_file;  // where `cpuid` came from, for the overrides shown
  std::chrono::milliseconds library_timeout{5000};  // HWIMG_CUDA_PROBE_TIMEOUT_MS, per library
  util::Output* output = &util::null_output();      // logs each step's outcome (--verbose)
};

[[nodiscard]] CpuFacts probe_cpu(const ProbeOptions& options);
// probe_cpu with HWIMG_OVERRIDE_CPU_LEVEL applied: the CPU as `select` sees it, which `build` also
// takes for this machine's platform.
[[nodiscard]] Result<CpuFacts> probe_host_cpu(const ProbeOptions& options);
[[nodiscard]] std::optional<NvidiaFacts> probe_nvidia(const ProbeOptions& options);
[[nodiscard]] Result<HostFacts> probe_host(const ProbeOptions& options);

}  // namespace hwimg::probe
