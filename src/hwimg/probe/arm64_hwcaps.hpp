#pragma once
// aarch64 host facts from AT_HWCAP/AT_HWCAP2 and the first processor block of /proc/cpuinfo
// (implementer, part). A pure function of recorded values, so it is tested on any machine.

#include <cstdint>
#include <string_view>

#include "hwimg/probe/host_facts.hpp"

namespace hwimg::probe {

[[nodiscard]] CpuFacts decode_arm64(std::uint64_t hwcap, std::uint64_t hwcap2, std::string_view cpuinfo);

}  // namespace hwimg::probe
