#pragma once
// One variant of an image as the selector sees it: its descriptor in the index and, for a variant
// without hwimg annotations, what its image config says (platform, environment, labels). From
// these come its requirements (docs/selection.md#annotations, docs/selection.md#rules).

#include <optional>
#include <string>
#include <vector>

#include "hwimg/hw/cpu_levels.hpp"
#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/hw/cuda_release.hpp"
#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/hw/nvidia_require.hpp"
#include "hwimg/oci/descriptor.hpp"

namespace hwimg::select {

struct ConfigFacts {
  oci::Platform platform;
  std::vector<std::string> env;  // "NAME=value"
  oci::Annotations labels;
};

struct Candidate {
  oci::Descriptor descriptor;          // the variant's manifest in the index (or the image itself)
  std::optional<ConfigFacts> config;   // read only for variants without hwimg annotations
};

// Whether the selector needs this candidate's image config to judge it.
[[nodiscard]] bool needs_config(const oci::Descriptor& descriptor);

// An NVIDIA_REQUIRE_* condition and the variable it came from ("NVIDIA_REQUIRE_CUDA").
struct NamedRequire {
  std::string variable;
  hw::RequireExpression expression;
};

// What a variant needs from a host. Annotations that cannot be read become `problems`, which
// reject the variant with the annotation named.
struct Requirements {
  std::string name;                          // variant id, else the platform, else the digest
  bool annotated = false;                    // judged by org.hwimg.* (else by platform and config)
  std::optional<oci::Platform> platform;
  std::optional<hw::X86Level> x86_level;     // amd64: from cpu.level, else the platform variant
  const hw::CpuTarget* cpu_level_target = nullptr;  // arm64 generic level ("armv8.2a"), if named
  const hw::CpuTarget* cpu_target = nullptr;        // named microarchitecture ("zen4")
  hw::FeatureSet cpu_features;               // org.hwimg.cpu.features
  std::optional<hw::CudaVersion> cuda;
  std::vector<hw::GpuTarget> gpu_targets;
  std::optional<hw::DriverVersion> bundled_driver;
  std::vector<NamedRequire> nvidia_require;  // NVIDIA_REQUIRE_* of the config (all must hold)
  std::vector<std::string> problems;

  [[nodiscard]] bool uses_gpu() const { return !gpu_targets.empty(); }
  // Every feature the CPU code needs: the level's, the named target's and the listed ones.
  [[nodiscard]] hw::FeatureSet required_cpu_features() const;
};

[[nodiscard]] Requirements requirements_of(const Candidate& candidate);

// The NVIDIA_REQUIRE_* conditions of an environment as the NVIDIA container toolkit reads them:
// every NVIDIA_REQUIRE_* except NVIDIA_REQUIRE_JETPACK*, `cuda>=M.m` from CUDA_VERSION for legacy
// images, none when NVIDIA_DISABLE_REQUIRE is true. Unparsable ones go to `problems`.
[[nodiscard]] std::vector<NamedRequire> nvidia_requirements(const std::vector<std::string>& env,
                                                                     std::vector<std::string>& problems);

}  // namespace hwimg::select
