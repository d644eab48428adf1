#include <algorithm>

#include <doctest/doctest.h>

#include "hwimg/probe/arm64_hwcaps.hpp"
#include "hwimg/util/strings.hpp"

using namespace hwimg;
using namespace hwimg::probe;

namespace {

std::string cpuinfo(std::string_view implementer, std::string_view part) {
  return fmt::format("processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd\nCPU implementer\t: {}\n"
                     "CPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: {}\nCPU revision\t: 1\n\n"
                     "processor\t: 1\nCPU implementer\t: 0x00\nCPU part\t: 0x000\n",
                     implementer, part);
}

std::vector<std::string> sorted_words(std::string_view text) {
  auto words = util::split(text, ' ');
  std::ranges::sort(words);
  return words;
}

struct Case {
  const char* name;
  std::uint64_t hwcap;
  std::uint64_t hwcap2;
  const char* implementer;
  const char* part;
  const char* vendor;
  const char* model_name;
  const char* microarch;
  const char* features;  // the Features line of the machine's /proc/cpuinfo
};

}  // namespace

// hwcap values computed from the Features lines of archspec-json@90b453f tests/targets captures
// (linux-amazon-neoverse_n1, -neoverse_v1, linux-rhel9-neoverse_v2, linux-ubuntu22.04-ampere1,
// linux-rocky8-a64fx, linux-amazon-cortex_a72).
TEST_CASE("aarch64 hwcaps and MIDR decode to features, vendor and the archspec target") {
  const Case cases[] = {
      {"graviton2", 0x10119fff, 0x0, "0x41", "0xd0c", "ARM", "Neoverse-N1", "neoverse_n1",
       "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs"},
      {"graviton3", 0xdfffffff, 0x1f201, "0x41", "0xd40", "ARM", "Neoverse-V1", "neoverse_v1",
       "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop "
       "sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm svebf16 "
       "i8mm bf16 dgh rng"},
      {"neoverse-v2", 0x3fffffff, 0xf3ff, "0x41", "0xd4f", "ARM", "Neoverse-V2", "neoverse_v2",
       "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop "
       "sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs sb dcpodp sve2 sveaes svepmull "
       "svebitperm svesha3 svesm4 flagm2 frint svei8mm svebf16 i8mm bf16 dgh"},
      {"ampereone", 0xffb3ffff, 0xb6181, "0xc0", "0xac3", "Ampere", "AmpereOne", "ampere1",
       "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop "
       "sha3 asimddp sha512 asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg dcpodp flagm2 frint i8mm bf16 rng "
       "bti ecv"},
      {"a64fx", 0x415fe7, 0x0, "0x46", "0x001", "Fujitsu", "A64FX", "a64fx",
       "fp asimd evtstrm sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm fcma dcpop sve"},
      {"graviton1", 0x8ff, 0x0, "0x41", "0xd08", "ARM", "Cortex-A72", "cortex_a72",
       "fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto cpu = decode_arm64(c.hwcap, c.hwcap2, cpuinfo(c.implementer, c.part));
    CHECK(cpu.arch == hw::CpuArch::arm64);
    CHECK(cpu.vendor == c.vendor);
    CHECK(cpu.model_name == c.model_name);
    CHECK(cpu.implementer == c.implementer);
    CHECK(cpu.cpu_part == c.part);
    CHECK(cpu.microarch.value_or("(none)") == c.microarch);
    CHECK_FALSE(cpu.level.has_value());
    CHECK_FALSE(cpu.family.has_value());
    CHECK(cpu.features == sorted_words(c.features));
  }
}

TEST_CASE("a VM hiding evtstrm still gets its named target; an unknown vendor gets none") {
  const auto hidden = decode_arm64(0x10119fff & ~std::uint64_t{1 << 2}, 0, cpuinfo("0x41", "0xd0c"));
  CHECK(hidden.microarch == "neoverse_n1");
  // Azure Cobalt 100: Neoverse N2 cores under Microsoft's implementer code, unknown to archspec.
  const auto cobalt = decode_arm64(0x3fffffff, 0xf3ff, cpuinfo("0x6d", "0xd49"));
  CHECK(cobalt.vendor == "0x6d");
  CHECK_FALSE(cobalt.microarch.has_value());
}

TEST_CASE("AT_HWCAP2 bits above 31 use the kernel's /proc names") {
  const auto cpu = decode_arm64(0x3, (std::uint64_t{1} << 32) | (std::uint64_t{1} << 37) | (std::uint64_t{1} << 45),
                                "");
  CHECK(cpu.features == std::vector<std::string>{"asimd", "ebf16", "fp", "sme2", "sveb16b16"});
  CHECK(cpu.vendor.empty());
  CHECK_FALSE(cpu.microarch.has_value());
}
