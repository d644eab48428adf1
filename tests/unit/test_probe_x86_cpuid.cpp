#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <doctest/doctest.h>

#include "hwimg/probe/x86_cpuid.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

using namespace hwimg;
using namespace hwimg::probe;

namespace {

const std::string k_dir = std::string(HWIMG_TEST_DATA_DIR) + "/probe/cpuid/";

std::string read(const std::string& path) {
  auto text = util::read_file(path);
  REQUIRE_MESSAGE(text.has_value(), path);
  return *text;
}

CpuFacts decode_file(const std::string& name) {
  const auto snapshot = parse_cpuid_dump(read(k_dir + name), name);
  REQUIRE_MESSAGE(snapshot.has_value(), snapshot.error().message);
  return decode_x86(*snapshot);
}

// The "# flags:" comment of a fixture: /proc/cpuinfo of the machine it was taken on, plus its
// "# runs:" comment: features that kernel did not list whose instructions ran there.
std::set<std::string> recorded_flags(const std::string& name) {
  std::set<std::string> flags;
  for (const auto& line : util::split(read(k_dir + name), '\n')) {
    for (const std::string_view prefix : {"# flags: ", "# runs: "}) {
      if (line.starts_with(prefix)) {
        for (const auto& flag : util::split(line.substr(prefix.size()), ' ')) {
          flags.insert(flag);
        }
      }
    }
  }
  return flags;
}

// The decodable flags of /proc/cpuinfo, which the decoder must reproduce exactly.
std::vector<std::string> expected_features(const std::set<std::string>& flags) {
  std::vector<std::string> expected;
  for (const auto name : x86_decodable_features()) {
    if (flags.contains(std::string(name))) {
      expected.emplace_back(name);
    }
  }
  std::ranges::sort(expected);
  return expected;
}

bool has(const CpuFacts& cpu, std::string_view feature) {
  return std::ranges::find(cpu.features, feature) != cpu.features.end();
}

struct Expected {
  const char* file;
  const char* vendor;
  int family;
  int model;
  const char* model_name;
  hw::X86Level level;
  const char* microarch;
};

}  // namespace

TEST_CASE("CPUID dumps of known CPUs decode to their vendor, model, level and microarchitecture") {
  const Expected cases[] = {
      {"haswell-e5-2680v3.txt", "Intel", 6, 63, "Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz", hw::X86Level::v3, "haswell"},
      {"broadwell-windows.txt", "Intel", 6, 61, "Intel(R) Core(TM) i7-5500U CPU @ 2.40GHz", hw::X86Level::v3,
       "broadwell"},
      {"skylake-sp-gold6132.txt", "Intel", 6, 85, "Intel(R) Xeon(R) Gold 6132 CPU @ 2.60GHz", hw::X86Level::v4,
       "skylake_avx512"},
      {"cascadelake-8260m.txt", "Intel", 6, 85, "Intel(R) Xeon(R) Platinum 8260M CPU @ 2.40GHz", hw::X86Level::v4,
       "cascadelake"},
      {"icelake-i7-1185g7-windows.txt", "Intel", 6, 140, "11th Gen Intel(R) Core(TM) i7-1185G7 @ 3.00GHz",
       hw::X86Level::v4, "icelake"},
      {"sapphirerapids-8480.txt", "Intel", 6, 143, "Intel(R) Xeon(R) Platinum 8480+", hw::X86Level::v4,
       "sapphirerapids"},
      {"zen2-epyc7742.txt", "AMD", 23, 49, "AMD EPYC 7742 64-Core Processor", hw::X86Level::v3, "zen2"},
      {"zen3-ryzen5950x.txt", "AMD", 25, 33, "AMD Ryzen 9 5950X 16-Core Processor", hw::X86Level::v3, "zen3"},
      {"zen4-epyc9654.txt", "AMD", 25, 17, "AMD EPYC 9654 96-Core Processor", hw::X86Level::v4, "zen4"},
      {"zen5-ryzen9950x.txt", "AMD", 26, 68, "AMD Ryzen 9 9950X 16-Core Processor", hw::X86Level::v4, "zen5"},
      // Real captures; these VMs hide waitpkg, so a model-207 Xeon is not sapphirerapids for archspec.
      {"dev-vm-xeon-model207.txt", "Intel", 6, 207, "Intel(R) Xeon(R) Processor", hw::X86Level::v4, "icelake"},
      {"h100-host-xeon-model207-amx.txt", "Intel", 6, 207, "Intel(R) Xeon(R) Processor", hw::X86Level::v4, "icelake"},
      // A real capture of a VM that hides rdseed, pku and flush_l1d and whose kernel left FSGSBASE off:
      // no AMD microarchitecture's feature list fits.
      {"dev-vm-turin-oxide.txt", "AMD", 26, 2, "Oxide Virtual Turin-like Processor", hw::X86Level::v4, "(none)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    const auto cpu = decode_file(c.file);
    CHECK(cpu.arch == hw::CpuArch::amd64);
    CHECK(cpu.vendor == c.vendor);
    CHECK(cpu.family == c.family);
    CHECK(cpu.model == c.model);
    CHECK(cpu.model_name == c.model_name);
    CHECK(cpu.level == c.level);
    CHECK(cpu.microarch.value_or("(none)") == c.microarch);
    if (const auto flags = recorded_flags(c.file); !flags.empty()) {
      CHECK(cpu.features == expected_features(flags));
    }
  }
}

TEST_CASE("AVX-512 that the OS left off in XCR0 is not reported: Skylake-SP becomes x86-64-v3") {
  const auto cpu = decode_file("skylake-sp-gold6132-avx512-off.txt");
  CHECK(cpu.level == hw::X86Level::v3);
  CHECK(cpu.microarch == "skylake");
  CHECK_FALSE(std::ranges::any_of(cpu.features, [](const std::string& f) { return f.starts_with("avx512"); }));
  CHECK(has(cpu, "avx2"));
  CHECK(has(cpu, "clwb"));
}

TEST_CASE("AMX needs XCR0 bits 17-18 and AVX needs bits 1-2") {
  auto snapshot = parse_cpuid_dump(read(k_dir + "sapphirerapids-8480.txt"), "spr");
  REQUIRE(snapshot.has_value());
  CHECK(has(decode_x86(*snapshot), "amx_tile"));

  snapshot->xcr0 = 0x2e7;
  auto cpu = decode_x86(*snapshot);
  CHECK_FALSE(has(cpu, "amx_tile"));
  CHECK(has(cpu, "avx512f"));
  CHECK(cpu.microarch == "icelake");

  snapshot->xcr0 = 0x3;
  cpu = decode_x86(*snapshot);
  CHECK_FALSE(has(cpu, "avx"));
  CHECK_FALSE(has(cpu, "fma"));
  CHECK(has(cpu, "xsave"));
  CHECK(cpu.level == hw::X86Level::v2);

  // Without OSXSAVE, XCR0 cannot be read and no XSAVE-managed state is usable.
  snapshot->leaves[{1, 0}].ecx &= ~(1U << 27);
  snapshot->xcr0 = 0xe7;
  cpu = decode_x86(*snapshot);
  CHECK_FALSE(has(cpu, "xsave"));
  CHECK_FALSE(has(cpu, "avx"));
}

TEST_CASE("vendor and brand bytes that are not printable ASCII are written \\xNN, and the facts stay JSON") {
  auto snapshot = parse_cpuid_dump(read(k_dir + "zen4-epyc9654.txt"), "zen4");
  REQUIRE(snapshot.has_value());
  // "\xff\xd0\n" and a UTF-8 lead byte where the brand starts; a newline in the vendor.
  snapshot->leaves[{0x80000002U, 0}].eax = 0xc30ad0ffU;
  snapshot->leaves[{0, 0}].ebx = 0x0a747541U;  // "Aut\n"
  const auto cpu = decode_x86(*snapshot);
  CHECK(cpu.model_name.starts_with("\\xff\\xd0\\x0a\\xc3"));
  CHECK(cpu.vendor.starts_with("Aut\\x0a"));
  HostFacts facts;
  facts.cpu = cpu;
  const auto again = parse_host_facts(to_json(facts), "facts.json");
  REQUIRE_MESSAGE(again.has_value(), again.error().message);
  CHECK(again->cpu.model_name == cpu.model_name);
}

TEST_CASE("FSGSBASE counts only where the kernel enabled it (AT_HWCAP2 bit 1)") {
  auto snapshot = parse_cpuid_dump(read(k_dir + "zen4-epyc9654.txt"), "zen4");
  REQUIRE(snapshot.has_value());
  REQUIRE_FALSE(snapshot->hwcap2.has_value());
  CHECK(has(decode_x86(*snapshot), "fsgsbase"));  // not recorded: a kernel that enables it
  snapshot->hwcap2 = 0x2;
  CHECK(has(decode_x86(*snapshot), "fsgsbase"));
  snapshot->hwcap2 = 0x1;  // ring-3 MONITOR/MWAIT only: FSGSBASE off, as before Linux 5.9 or with nofsgsbase
  const auto cpu = decode_x86(*snapshot);
  CHECK_FALSE(has(cpu, "fsgsbase"));
  CHECK(has(cpu, "rdseed"));
  CHECK(cpu.level == hw::X86Level::v4);
  // Every AMD microarchitecture that reaches x86-64-v3 (steamroller on) has FSGSBASE.
  CHECK(cpu.microarch.value_or("(none)") == "(none)");
}

TEST_CASE("leaves above the highest one CPUID reports are ignored") {
  auto snapshot = parse_cpuid_dump(read(k_dir + "zen4-epyc9654.txt"), "zen4");
  REQUIRE(snapshot.has_value());
  snapshot->leaves[{0, 0}].eax = 1;  // basic leaves stop at 1: leaf 7 and 0xD are invalid
  const auto cpu = decode_x86(*snapshot);
  CHECK_FALSE(has(cpu, "avx2"));
  CHECK_FALSE(has(cpu, "xsaveopt"));
  CHECK(has(cpu, "avx"));
  CHECK(has(cpu, "abm"));
}

TEST_CASE("the CPUID dump format round-trips and names the bad line") {
  const auto snapshot = parse_cpuid_dump(read(k_dir + "zen3-ryzen5950x.txt"), "zen3");
  REQUIRE(snapshot.has_value());
  const auto again = parse_cpuid_dump(format_cpuid_dump(*snapshot), "again");
  REQUIRE(again.has_value());
  CHECK(again->leaves == snapshot->leaves);
  CHECK(again->xcr0 == snapshot->xcr0);
  CHECK_FALSE(again->hwcap2.has_value());

  auto with_hwcap2 = *snapshot;
  with_hwcap2.hwcap2 = 0x2;
  CHECK(format_cpuid_dump(with_hwcap2).ends_with("\nhwcap2 2\n"));
  CHECK(parse_cpuid_dump(format_cpuid_dump(with_hwcap2), "again")->hwcap2 == 0x2U);

  // Tabs and CRLF line ends as spaces.
  const auto tabbed = parse_cpuid_dump("00000001.0\t1 2\t3 4\r\nxcr0 e7\r\n", "dump.txt");
  REQUIRE_MESSAGE(tabbed.has_value(), tabbed.error().message);
  CHECK(tabbed->get(1) == CpuidRegisters{1, 2, 3, 4});
  CHECK(tabbed->xcr0 == 0xe7U);
}

TEST_CASE("a malformed CPUID dump is refused at its line and column, saying what was expected") {
  const auto error = [](std::string_view text) {
    const auto parsed = parse_cpuid_dump(text, "dump.txt");
    REQUIRE_FALSE(parsed.has_value());
    return parsed.error().message;
  };
  CHECK(error("# ok\n00000001.0 1 2 3\n") ==
        "failed to read CPUID dump dump.txt:2:17: expected EDX as 32-bit hex, found the end of the line");
  CHECK(error("00000001.0 1 2 3 4 5\n") ==
        "failed to read CPUID dump dump.txt:1:20: expected the end of the line, found \"5\"");
  CHECK(error("00000001.0 1 100000000 3 4\n") ==
        "failed to read CPUID dump dump.txt:1:14: expected EBX as 32-bit hex, found \"100000000\"");
  CHECK(error("  leaf7 1 2 3 4\n") ==
        "failed to read CPUID dump dump.txt:1:3: expected LEAF.SUBLEAF in hex (\"00000007.0\"), \"xcr0\" or "
        "\"hwcap2\", found \"leaf7\"");
  CHECK(error("00000007. 1 2 3 4\n").starts_with("failed to read CPUID dump dump.txt:1:1: expected LEAF.SUBLEAF"));
  CHECK(error("hwcap2 zz\n") == "failed to read CPUID dump dump.txt:1:8: expected a 64-bit hex number, found \"zz\"");
  CHECK(error("xcr0\n") == "failed to read CPUID dump dump.txt:1:5: expected a 64-bit hex number, found the end of the line");
  CHECK(error("xcr0 7 # x87, SSE, AVX\n") ==
        "failed to read CPUID dump dump.txt:1:8: expected the end of the line, found \"#\"");
  CHECK(error("00000007.0 1 2 3 4\n7.0 0 0 0 0\n") ==
        "failed to read CPUID dump dump.txt:2:1: leaf 00000007.0 again (line 1 set it)");
  CHECK(error("xcr0 7\n\nxcr0 e7\n") == "failed to read CPUID dump dump.txt:3:1: xcr0 again (line 1 set it)");
  CHECK(error("00000001.0 \x1b[2J 2 3 4\n").find("found \"\\x1b[2J\"") != std::string::npos);
}

#if defined(__x86_64__)
namespace {

// Whether this CPU runs an instruction of `feature`, tried in a child process so that a SIGILL
// ends only the child; nothing for a feature the test has no instruction for.
std::optional<bool> runs_here(std::string_view feature) {
  bool (*attempt)() = nullptr;
  if (feature == "abm") {
    // LZCNT is REP BSR: a CPU without it runs BSR instead, so the result tells them apart.
    attempt = [] {
      unsigned long out = 0;
      __asm__ volatile("lzcnt %1, %0" : "=r"(out) : "r"(1UL));
      return out == 63;
    };
  } else if (feature == "sse4a") {
    attempt = [] {
      __asm__ volatile("extrq $4, $0, %%xmm0" ::: "xmm0");
      return true;
    };
  } else {
    return std::nullopt;
  }
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(attempt() ? 0 : 1);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

// Some VMs give user space CPUID bits their kernel does not list: the guest seen while writing
// this (a Firecracker-style "Oxide Virtual Turin-like Processor") reports abm and sse4a in CPUID,
// its kernel lists neither, and LZCNT and EXTRQ run. The decoder follows CPUID, as glibc and
// GCC's __builtin_cpu_supports do, so such a feature passes only where its instruction runs.
TEST_CASE("on this machine the decoded features agree with /proc/cpuinfo, or the CPU runs the ones it omits") {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(cpuinfo, line)) {
    if (line.starts_with("flags")) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string flag; words >> flag;) {
        flags.insert(flag);
      }
      break;
    }
  }
  REQUIRE_FALSE(flags.empty());
  const auto decoded = decode_x86(read_cpuid()).features;
  const auto listed = expected_features(flags);
  for (const auto& feature : listed) {
    CAPTURE(feature);
    CHECK_MESSAGE(std::ranges::find(decoded, feature) != decoded.end(), "the kernel lists it, the decoder missed it");
  }
  for (const auto& feature : decoded) {
    if (std::ranges::find(listed, feature) != listed.end()) continue;
    CAPTURE(feature);
    const auto runs = runs_here(feature);
    CHECK_MESSAGE(runs.has_value(), "decoded, the kernel does not list it, and the test has no instruction to try");
    CHECK_MESSAGE(runs.value_or(false), "decoded, the kernel does not list it, and its instruction does not run");
    if (runs.value_or(false)) MESSAGE("decoded " << feature << ": /proc/cpuinfo omits it, its instruction runs here");
  }
}
#endif
