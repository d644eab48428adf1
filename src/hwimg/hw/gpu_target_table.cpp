#include "hwimg/hw/detail/gpu_target_table.hpp"

#include <fmt/format.h>

namespace hwimg::hw {
namespace detail {
namespace {

constexpr ArchFeatures base = ArchFeatures::baseline;
constexpr ArchFeatures fam = ArchFeatures::family;
constexpr ArchFeatures arch = ArchFeatures::arch_specific;

// The documents the rows cite (docs/compatibility.md#gpu-targets-by-toolkit names what each says).
constexpr std::string_view target_src_matrix =
    "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html";
constexpr std::string_view target_src_below_75 =
    "https://developer.nvidia.com/blog/navigating-gpu-architecture-support-a-guide-for-nvidia-cuda-developers/";
constexpr std::string_view target_src_llvm = "https://github.com/llvm/llvm-project/blob/main/clang/lib/Basic/Cuda.cpp";
constexpr std::string_view target_src_llvm_13 = "https://github.com/llvm/llvm-project/pull/156857";
constexpr std::string_view target_src_features = "https://docs.nvidia.com/cuda/cuda-features-archive/index.html";
constexpr std::string_view target_src_family_blog =
    "https://developer.nvidia.com/blog/"
    "nvidia-blackwell-and-nvidia-cuda-12-9-introduce-family-specific-architecture-features/";
constexpr std::string_view target_src_ptx = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html";
constexpr std::string_view target_src_guide =
    "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html";

// docs/compatibility.md#gpu-targets-by-toolkit (nvcc 13.0 --list-gpu-code agrees for 13.0).
constexpr std::array target_support{
    TargetSupportRow{35, base, {0, 0}, CudaVersion{12, 0}, "", target_src_matrix},
    TargetSupportRow{37, base, {0, 0}, CudaVersion{12, 0}, "", target_src_matrix},
    TargetSupportRow{50, base, {0, 0}, CudaVersion{13, 0}, "", target_src_below_75},
    TargetSupportRow{52, base, {0, 0}, CudaVersion{13, 0}, "", target_src_below_75},
    TargetSupportRow{53, base, {0, 0}, CudaVersion{13, 0}, "", target_src_below_75},
    TargetSupportRow{60, base, {8, 0}, CudaVersion{13, 0}, "", target_src_below_75},
    TargetSupportRow{61, base, {8, 0}, CudaVersion{13, 0}, "", target_src_below_75},
    TargetSupportRow{62, base, {8, 0}, CudaVersion{13, 0}, "", target_src_below_75},
    TargetSupportRow{70, base, {9, 0}, CudaVersion{13, 0}, "", target_src_below_75},
    TargetSupportRow{72, base, {9, 1}, CudaVersion{13, 0}, "", target_src_below_75},
    TargetSupportRow{75, base, {10, 0}, std::nullopt, "", target_src_matrix},
    TargetSupportRow{80, base, {11, 0}, std::nullopt, "", target_src_matrix},
    TargetSupportRow{86, base, {11, 1}, std::nullopt, "", target_src_llvm},
    TargetSupportRow{87, base, {11, 4}, std::nullopt, "", target_src_llvm},
    TargetSupportRow{88, base, {13, 0}, std::nullopt, "", target_src_llvm_13},
    TargetSupportRow{89, base, {11, 8}, std::nullopt, "", target_src_matrix},
    TargetSupportRow{90, base, {11, 8}, std::nullopt, "", target_src_matrix},
    TargetSupportRow{90, arch, {12, 0}, std::nullopt, "", target_src_matrix},
    TargetSupportRow{100, base, {12, 8}, std::nullopt, "", target_src_matrix},
    TargetSupportRow{100, arch, {12, 8}, std::nullopt, "", target_src_features},
    TargetSupportRow{100, fam, {12, 9}, std::nullopt, "", target_src_family_blog},
    TargetSupportRow{101, base, {12, 8}, CudaVersion{13, 0}, "110", target_src_features},
    TargetSupportRow{101, arch, {12, 8}, CudaVersion{13, 0}, "110a", target_src_features},
    TargetSupportRow{101, fam, {12, 9}, CudaVersion{13, 0}, "110f", target_src_features},
    TargetSupportRow{103, base, {12, 9}, std::nullopt, "", target_src_features},
    TargetSupportRow{103, arch, {12, 9}, std::nullopt, "", target_src_features},
    TargetSupportRow{103, fam, {12, 9}, std::nullopt, "", target_src_features},
    TargetSupportRow{107, base, {13, 4}, std::nullopt, "", target_src_ptx},
    TargetSupportRow{107, arch, {13, 4}, std::nullopt, "", target_src_ptx},
    TargetSupportRow{107, fam, {13, 4}, std::nullopt, "", target_src_ptx},
    TargetSupportRow{110, base, {13, 0}, std::nullopt, "", target_src_features},
    TargetSupportRow{110, arch, {13, 0}, std::nullopt, "", target_src_features},
    TargetSupportRow{110, fam, {13, 0}, std::nullopt, "", target_src_features},
    TargetSupportRow{120, base, {12, 8}, std::nullopt, "", target_src_matrix},
    TargetSupportRow{120, arch, {12, 8}, std::nullopt, "", target_src_features},
    TargetSupportRow{120, fam, {12, 9}, std::nullopt, "", target_src_family_blog},
    TargetSupportRow{121, base, {12, 9}, std::nullopt, "", target_src_features},
    TargetSupportRow{121, arch, {12, 9}, std::nullopt, "", target_src_features},
    TargetSupportRow{121, fam, {12, 9}, std::nullopt, "", target_src_features},
};

// The current Programming Guide's families (docs/compatibility.md#gpu-families): a family target
// runs on the devices of its major with an equal or higher minor. 10.1 is Thor under CUDA
// 12.8/12.9, renumbered 11.0 since.
constexpr std::array target_families{
    TargetFamilyRow{{10, 0}, {{{10, 0}, {10, 3}, {10, 7}}}, 3, target_src_guide},
    TargetFamilyRow{{10, 1}, {{{10, 1}}}, 1, target_src_family_blog},
    TargetFamilyRow{{10, 3}, {{{10, 3}, {10, 7}}}, 2, target_src_guide},
    TargetFamilyRow{{10, 7}, {{{10, 7}}}, 1, target_src_guide},
    TargetFamilyRow{{11, 0}, {{{11, 0}}}, 1, target_src_guide},
    TargetFamilyRow{{12, 0}, {{{12, 0}, {12, 1}}}, 2, target_src_guide},
    TargetFamilyRow{{12, 1}, {{{12, 1}}}, 1, target_src_guide},
};

}  // namespace

std::span<const TargetSupportRow> target_support_rows() { return target_support; }
std::span<const TargetFamilyRow> target_family_rows() { return target_families; }

}  // namespace detail

std::vector<FactSource> gpu_target_sources() {
  std::vector<FactSource> sources;
  for (const auto& row : detail::target_support) {
    const GpuTarget target{CodeKind::sass, {row.number / 10, row.number % 10}, row.features};
    sources.push_back({"GPU targets by toolkit", target.name(), row.source});
  }
  for (const auto& row : detail::target_families) {
    sources.push_back({"GPU families", fmt::format("{}f", row.target.number()), row.source});
  }
  return sources;
}

}  // namespace hwimg::hw
