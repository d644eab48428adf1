#include "hwimg/probe/arm64_hwcaps.hpp"

#include <algorithm>
#include <array>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::probe {
namespace {

// Linux uapi hwcap.h bits in /proc/cpuinfo spelling (docs/compatibility.md#aarch64-hwcaps).
constexpr std::array<std::string_view, 32> k_hwcap{
    "fp",     "asimd",   "evtstrm", "aes",      "pmull", "sha1",  "sha2",  "crc32",
    "atomics", "fphp",   "asimdhp", "cpuid",    "asimdrdm", "jscvt", "fcma", "lrcpc",
    "dcpop",  "sha3",    "sm3",     "sm4",      "asimddp", "sha512", "sve",  "asimdfhm",
    "dit",    "uscat",   "ilrcpc",  "flagm",    "ssbs",  "sb",    "paca",  "pacg"};

constexpr std::array<std::string_view, 48> k_hwcap2{
    "dcpodp",   "sve2",       "sveaes",     "svepmull",   "svebitperm", "svesha3",   "svesm4",    "flagm2",
    "frint",    "svei8mm",    "svef32mm",   "svef64mm",   "svebf16",    "i8mm",      "bf16",      "dgh",
    "rng",      "bti",        "mte",        "ecv",        "afp",        "rpres",     "mte3",      "sme",
    "smei16i64", "smef64f64", "smei8i32",   "smef16f32",  "smeb16f32",  "smef32f32", "smefa64",   "wfxt",
    "ebf16",    "sveebf16",   "cssc",       "rprfm",      "sve2p1",     "sme2",      "sme2p1",    "smei16i32",
    "smebi32i32", "smeb16b16", "smef16f16", "mops",       "hbc",        "sveb16b16", "lrcpc3",    "lse128"};

// Core names for the parts the reference lists (util-linux lscpu-arm.c spellings).
struct Part {
  std::string_view implementer;
  std::string_view part;
  std::string_view name;
};
constexpr std::array k_parts{
    Part{"0x41", "0xd08", "Cortex-A72"},   Part{"0x41", "0xd0c", "Neoverse-N1"},
    Part{"0x41", "0xd40", "Neoverse-V1"},  Part{"0x41", "0xd49", "Neoverse-N2"},
    Part{"0x41", "0xd4f", "Neoverse-V2"},  Part{"0x41", "0xd83", "Neoverse-V3AE"},
    Part{"0x41", "0xd84", "Neoverse-V3"},  Part{"0x41", "0xd8e", "Neoverse-N3"},
    Part{"0xc0", "0xac3", "AmpereOne"},    Part{"0xc0", "0xac4", "AmpereOne AC04"},
    Part{"0x46", "0x001", "A64FX"},        Part{"0x43", "0x0af", "ThunderX2 99xx"}};

// The value of `key` in the first processor block ("CPU implementer\t: 0x41").
std::string first_value(std::string_view cpuinfo, std::string_view key) {
  for (const auto& line : util::split(cpuinfo, '\n')) {
    const auto colon = line.find(':');
    if (colon != std::string::npos && util::trim(std::string_view(line).substr(0, colon)) == key) {
      return util::to_lower(util::trim(std::string_view(line).substr(colon + 1)));
    }
  }
  return {};
}

}  // namespace

CpuFacts decode_arm64(std::uint64_t hwcap, std::uint64_t hwcap2, std::string_view cpuinfo) {
  CpuFacts cpu;
  cpu.arch = hw::CpuArch::arm64;
  for (std::size_t bit = 0; bit < k_hwcap.size(); ++bit) {
    if ((hwcap >> bit) & 1U) {
      cpu.features.emplace_back(k_hwcap[bit]);
    }
  }
  for (std::size_t bit = 0; bit < k_hwcap2.size(); ++bit) {
    if ((hwcap2 >> bit) & 1U) {
      cpu.features.emplace_back(k_hwcap2[bit]);
    }
  }
  std::ranges::sort(cpu.features);
  cpu.implementer = first_value(cpuinfo, "CPU implementer");
  cpu.cpu_part = first_value(cpuinfo, "CPU part");
  cpu.vendor = hw::arm_vendor_name(cpu.implementer);
  for (const auto& part : k_parts) {
    if (part.implementer == cpu.implementer && part.part == cpu.cpu_part) {
      cpu.model_name = std::string(part.name);
    }
  }
  derive_cpu_facts(cpu);
  return cpu;
}

}  // namespace hwimg::probe
