#pragma once
// The rows behind hw::cpu_targets(): archspec's named microarchitectures and the few GCC targets
// archspec lacks (docs/compatibility.md#archspec-names). Internal to the hw area.

#include <span>
#include <string_view>
#include <vector>

#include "hwimg/hw/cpu_targets.hpp"

namespace hwimg::hw::detail {

// Features are those added over the parents (the table builder takes the union), /proc/cpuinfo names.
struct CpuTargetRow {
  std::string_view name;
  CpuArch arch;
  std::string_view vendor;
  std::string_view cpu_part;
  std::vector<std::string_view> parents;
  std::vector<std::string_view> added;
  std::vector<GccFlags> gcc;  // newest first
  std::string_view source;
};

// Parents come before their children.
[[nodiscard]] std::span<const CpuTargetRow> cpu_target_rows();

}  // namespace hwimg::hw::detail
