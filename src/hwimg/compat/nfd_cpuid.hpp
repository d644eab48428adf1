#pragma once
// hwimg's CPU feature names (/proc/cpuinfo spelling) as NFD's `cpu.cpuid` flags, which are
// klauspost/cpuid's feature names (docs/nfd.md#cpu-flags).

#include <optional>
#include <string_view>

#include "hwimg/hw/cpu_levels.hpp"

namespace hwimg::compat {

// "avx512f" -> "AVX512F", "fma" -> "FMA3", "pni" -> "SSE3"; nullopt where NFD has no flag for it.
[[nodiscard]] std::optional<std::string_view> nfd_cpuid_flag(hw::CpuArch arch, std::string_view feature);

}  // namespace hwimg::compat
