#pragma once
// The rows behind hw::check_toolkit_supports() and hw::family_members(): which toolkit compiles
// which target and which devices a family target runs on, each with the public document it comes
// from (docs/compatibility.md#gpu-targets-by-toolkit, docs/compatibility.md#gpu-families). Internal
// to the hw area.

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "hwimg/hw/gpu_target.hpp"

namespace hwimg::hw::detail {

// One row covers the sm_ and compute_ spelling alike.
struct TargetSupportRow {
  int number;  // 90 for sm_90
  ArchFeatures features;
  CudaVersion first;  // {0, 0}: older than every toolkit in cuda_release
  std::optional<CudaVersion> removed_in;
  std::string_view renamed_to;  // the name the removed target lives on under, if any
  std::string_view source;
};

struct TargetFamilyRow {
  ComputeCapability target;
  std::array<ComputeCapability, 3> members;
  std::size_t count;
  std::string_view source;
};

[[nodiscard]] std::span<const TargetSupportRow> target_support_rows();
[[nodiscard]] std::span<const TargetFamilyRow> target_family_rows();

}  // namespace hwimg::hw::detail
