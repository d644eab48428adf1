#pragma once
// One expanded variant of a matrix: what the builder builds, labels and checks.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hwimg/hw/cuda_release.hpp"
#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/oci/descriptor.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::matrix {

// Where a variant's toolkit location came from: a build in a builder image keeps only the matrix's.
enum class CudaHomeOrigin { default_root, matrix };

struct Variant {
  std::string id;                          // "cuda13.0-sm90-x86-64-v3", "cpu-x86-64-v2"
  std::optional<hw::CudaVersion> cuda;     // absent for CPU-only variants
  std::vector<hw::GpuTarget> gpu_targets;  // sorted; PTX from `ptx: true` included; empty: CPU-only
  std::string cpu_level;                   // "x86-64-v3"; for arm64 the generic ancestor ("armv8.2a")
  std::string cpu_target;                  // archspec name ("zen4"), empty for a plain level
  std::vector<std::string> cpu_features;   // instruction-set features the target adds over its level
  std::string cpu_march;                   // GCC flags for the matrix's GCC version
  oci::Platform platform;                  // linux/amd64 with v2..v4 (none for v1), or linux/arm64
  oci::Annotations annotations;            // the org.hwimg.* pairs of docs/selection.md#annotations
  std::string nvidia_require_cuda;         // NVIDIA_REQUIRE_CUDA; empty for CPU-only variants
  // The user-mode driver the image bundles (the matrix's driver axis; GPU variants only): the
  // variant runs only where the kernel driver is exactly this version (docs/selection.md#rule-5-bundled-driver).
  std::optional<hw::DriverVersion> bundled_driver;
  std::filesystem::path cuda_home;         // where the toolkit should be; checked by resolve_toolkit
  CudaHomeOrigin cuda_home_origin = CudaHomeOrigin::default_root;
  // ${...} values of docs/recipe.md except `out`: variant, cuda.version, cuda.home,
  // gpu.targets, gpu.gencode, gpu.cmake, cpu.level, cpu.target, cpu.march, driver.version,
  // driver.branch ("" where not applicable).
  std::map<std::string, std::string> variables;

  [[nodiscard]] bool uses_gpu() const { return !gpu_targets.empty(); }
};

// The variables with `out` added: the recipe's ${...} values for one build of the variant.
[[nodiscard]] std::map<std::string, std::string> build_variables(const Variant& variant,
                                                                 const std::filesystem::path& out);
// The same as environment variables for the build's commands: HWIMG_VARIANT, HWIMG_OUT,
// HWIMG_CUDA_VERSION, HWIMG_CUDA_HOME, HWIMG_GPU_TARGETS, HWIMG_GPU_GENCODE, HWIMG_GPU_CMAKE,
// HWIMG_CPU_LEVEL, HWIMG_CPU_TARGET, HWIMG_CPU_MARCH, HWIMG_DRIVER_VERSION, HWIMG_DRIVER_BRANCH;
// plus CUDA_HOME for GPU variants.
[[nodiscard]] std::map<std::string, std::string> build_environment(const Variant& variant,
                                                                   const std::filesystem::path& out);

struct Toolkit {
  std::filesystem::path home;  // /usr/local/cuda-13.0
  std::filesystem::path nvcc;  // home/bin/nvcc
};

// Finds the CUDA toolkit a GPU variant builds with, at `variant.cuda_home`; the error names where
// it looked. Called only when the variant is built, so `hwimg matrix` works without toolkits.
[[nodiscard]] Result<Toolkit> resolve_toolkit(const Variant& variant);

}  // namespace hwimg::matrix
