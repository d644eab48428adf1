#pragma once
// The host as the rules read it: host facts with derived values filled in (level, the features a
// level implies, the CUDA version of a driver) and only the GPUs the container will get.

#include <optional>
#include <string>
#include <vector>

#include "hwimg/hw/cpu_levels.hpp"
#include "hwimg/hw/cuda_release.hpp"
#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/probe/host_facts.hpp"
#include "hwimg/select/gpu_selection.hpp"

namespace hwimg::select {

struct HostGpu {
  int index = 0;
  std::string uuid;
  std::string name;
  std::optional<hw::ComputeCapability> capability;  // absent when the probe could not tell
  std::string brand;
};

struct HostView {
  std::string os;
  std::string arch;                      // OCI name
  std::optional<hw::X86Level> x86_level; // amd64 only
  std::string cpu_name;                  // microarch, else level ("zen4", "x86-64-v3", "arm64")
  std::string vendor;
  hw::FeatureSet features;               // reported features plus those the level implies
  bool has_driver = false;
  std::optional<hw::DriverVersion> driver;
  std::optional<hw::CudaVersion> cuda;   // reported, else derived from the driver branch
  std::vector<HostGpu> gpus;             // the considered GPUs
  GpuChoice choice = GpuChoice::all;
  std::string gpu_origin = "default";    // where the GPU choice came from, for messages
  std::vector<std::string> overrides;    // HWIMG_OVERRIDE_* that replaced probed facts
};

[[nodiscard]] HostView make_host_view(const probe::HostFacts& facts, const std::vector<probe::GpuFacts>& considered,
                                      const GpuSelection& selection);

// "linux/amd64 x86-64-v3 (zen4, AMD); NVIDIA driver 580.65.06, CUDA 13.0; GPUs: 0 NVIDIA H100 (9.0)",
// then "; overrides: HWIMG_OVERRIDE_CPU_LEVEL=\"x86-64-v2\"" when any is in effect.
[[nodiscard]] std::string describe_host(const HostView& host);

}  // namespace hwimg::select
