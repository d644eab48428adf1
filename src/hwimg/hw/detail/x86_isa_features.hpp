#pragma once
// Which CPU features (/proc/cpuinfo names) an instruction of each Zydis ISA set needs
// (docs/compatibility.md#instruction-sets). Internal to the hw area; the Zydis enum stays in the
// .cpp files, so the set is passed as its number.

#include <span>
#include <string_view>

namespace hwimg::hw::detail {

// Empty for what every x86-64 CPU runs (the 8086..Pentium Pro base, long mode) and for hint
// instructions that older CPUs run as NOPs (ENDBR64, PREFETCHW's NOP forms, PAUSE).
[[nodiscard]] std::span<const std::string_view> x86_isa_set_features(int isa_set);

}  // namespace hwimg::hw::detail
