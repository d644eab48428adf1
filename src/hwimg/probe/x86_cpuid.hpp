#pragma once
// x86 host facts from CPUID and XGETBV: features the OS enabled, level, vendor, family/model,
// brand string and the named microarchitecture. Decoding is a pure function of recorded
// register values, so every CPU in the test data is checked on any machine.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwimg/probe/host_facts.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::probe {

struct CpuidRegisters {
  std::uint32_t eax = 0;
  std::uint32_t ebx = 0;
  std::uint32_t ecx = 0;
  std::uint32_t edx = 0;
  bool operator==(const CpuidRegisters&) const = default;
};

// The leaves the decoder reads, keyed by (leaf, subleaf), plus XCR0 (0 when OSXSAVE is off) and
// the AT_HWCAP2 Linux gave the probing process, which says whether the kernel enabled FSGSBASE
// (docs/compatibility.md#kernel-enabled-instructions). A dump that did not record it decodes as a
// kernel that enables FSGSBASE, as every Linux since 5.9 does on a CPU that has it.
struct CpuidSnapshot {
  std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegisters> leaves;
  std::uint64_t xcr0 = 0;
  std::optional<std::uint64_t> hwcap2;

  // Zeros for a leaf that was not recorded (as CPUID reports for reserved bits).
  [[nodiscard]] CpuidRegisters get(std::uint32_t leaf, std::uint32_t subleaf = 0) const;
};

// Executes CPUID/XGETBV on this CPU and reads AT_HWCAP2; an empty snapshot on other architectures.
[[nodiscard]] CpuidSnapshot read_cpuid();

// Text form, one line per leaf: "00000007.0 eax ebx ecx edx" (hex), then "xcr0 HEX" and, where it
// was read, "hwcap2 HEX"; '#' comments.
[[nodiscard]] std::string format_cpuid_dump(const CpuidSnapshot& snapshot);
[[nodiscard]] Result<CpuidSnapshot> parse_cpuid_dump(std::string_view text, std::string_view file_name);

[[nodiscard]] CpuFacts decode_x86(const CpuidSnapshot& snapshot);

// Every feature name the decoder can report, for comparing with /proc/cpuinfo.
[[nodiscard]] std::vector<std::string_view> x86_decodable_features();

}  // namespace hwimg::probe
