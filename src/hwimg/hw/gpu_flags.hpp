#pragma once
// Compiler spellings of a target list (docs/compatibility.md#nvcc-and-cmake-spellings).

#include <span>
#include <string>

#include "hwimg/hw/gpu_target.hpp"

namespace hwimg::hw {

// One `-gencode` per target, embedding exactly that image: "-gencode arch=compute_90a,code=sm_90a
// -gencode arch=compute_90,code=compute_90". (`-arch=sm_90a` would add compute_90 PTX as well.)
[[nodiscard]] std::string nvcc_gencode_flags(std::span<const GpuTarget> targets);

// CMAKE_CUDA_ARCHITECTURES: "80-real;90a-real;90-virtual". CMake 3.25 rejects the a/f suffixes;
// newer releases accept them, and `${gpu.gencode}` in CMAKE_CUDA_FLAGS works with any.
[[nodiscard]] std::string cmake_cuda_architectures(std::span<const GpuTarget> targets);

}  // namespace hwimg::hw
