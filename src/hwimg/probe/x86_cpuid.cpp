#include "hwimg/probe/x86_cpuid.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::probe {
namespace {

enum class Reg { eax, ebx, ecx, edx };
// What the OS must enable before a feature is usable: XCR0 state (docs/compatibility.md#xcr0-os-state)
// or, for FSGSBASE, CR4.FSGSBASE, which Linux reports in AT_HWCAP2
// (docs/compatibility.md#kernel-enabled-instructions).
enum class State { none, xsave, avx, avx512, amx, kernel_fsgsbase };

// <asm/hwcap2.h>: the kernel let ring 3 run RDFSBASE/WRFSBASE/RDGSBASE/WRGSBASE.
constexpr std::uint64_t k_hwcap2_fsgsbase = 1U << 1;

struct Bit {
  std::string_view name;
  std::uint32_t leaf;
  std::uint32_t subleaf;
  Reg reg;
  unsigned bit;
  State state;
};

constexpr std::uint32_t k_ext = 0x80000000;

// /proc/cpuinfo names (docs/compatibility.md#x86-64-levels, docs/compatibility.md#x86-feature-names).
constexpr std::array k_bits{
    Bit{"fpu", 1, 0, Reg::edx, 0, State::none},
    Bit{"cx8", 1, 0, Reg::edx, 8, State::none},
    Bit{"cmov", 1, 0, Reg::edx, 15, State::none},
    Bit{"clflush", 1, 0, Reg::edx, 19, State::none},
    Bit{"mmx", 1, 0, Reg::edx, 23, State::none},
    Bit{"fxsr", 1, 0, Reg::edx, 24, State::none},
    Bit{"sse", 1, 0, Reg::edx, 25, State::none},
    Bit{"sse2", 1, 0, Reg::edx, 26, State::none},
    Bit{"pni", 1, 0, Reg::ecx, 0, State::none},
    Bit{"pclmulqdq", 1, 0, Reg::ecx, 1, State::none},
    Bit{"ssse3", 1, 0, Reg::ecx, 9, State::none},
    Bit{"fma", 1, 0, Reg::ecx, 12, State::avx},
    Bit{"cx16", 1, 0, Reg::ecx, 13, State::none},
    Bit{"sse4_1", 1, 0, Reg::ecx, 19, State::none},
    Bit{"sse4_2", 1, 0, Reg::ecx, 20, State::none},
    Bit{"movbe", 1, 0, Reg::ecx, 22, State::none},
    Bit{"popcnt", 1, 0, Reg::ecx, 23, State::none},
    Bit{"aes", 1, 0, Reg::ecx, 25, State::none},
    Bit{"xsave", 1, 0, Reg::ecx, 26, State::xsave},
    Bit{"avx", 1, 0, Reg::ecx, 28, State::avx},
    Bit{"f16c", 1, 0, Reg::ecx, 29, State::avx},
    Bit{"rdrand", 1, 0, Reg::ecx, 30, State::none},
    Bit{"hypervisor", 1, 0, Reg::ecx, 31, State::none},
    Bit{"fsgsbase", 7, 0, Reg::ebx, 0, State::kernel_fsgsbase},
    Bit{"tsc_adjust", 7, 0, Reg::ebx, 1, State::none},
    Bit{"bmi1", 7, 0, Reg::ebx, 3, State::none},
    Bit{"avx2", 7, 0, Reg::ebx, 5, State::avx},
    Bit{"bmi2", 7, 0, Reg::ebx, 8, State::none},
    Bit{"avx512f", 7, 0, Reg::ebx, 16, State::avx512},
    Bit{"avx512dq", 7, 0, Reg::ebx, 17, State::avx512},
    Bit{"rdseed", 7, 0, Reg::ebx, 18, State::none},
    Bit{"adx", 7, 0, Reg::ebx, 19, State::none},
    Bit{"avx512ifma", 7, 0, Reg::ebx, 21, State::avx512},
    Bit{"clflushopt", 7, 0, Reg::ebx, 23, State::none},
    Bit{"clwb", 7, 0, Reg::ebx, 24, State::none},
    Bit{"avx512pf", 7, 0, Reg::ebx, 26, State::avx512},
    Bit{"avx512er", 7, 0, Reg::ebx, 27, State::avx512},
    Bit{"avx512cd", 7, 0, Reg::ebx, 28, State::avx512},
    Bit{"sha_ni", 7, 0, Reg::ebx, 29, State::none},
    Bit{"avx512bw", 7, 0, Reg::ebx, 30, State::avx512},
    Bit{"avx512vl", 7, 0, Reg::ebx, 31, State::avx512},
    Bit{"avx512vbmi", 7, 0, Reg::ecx, 1, State::avx512},
    Bit{"pku", 7, 0, Reg::ecx, 3, State::none},
    Bit{"ospke", 7, 0, Reg::ecx, 4, State::none},
    Bit{"waitpkg", 7, 0, Reg::ecx, 5, State::none},
    Bit{"avx512_vbmi2", 7, 0, Reg::ecx, 6, State::avx512},
    Bit{"gfni", 7, 0, Reg::ecx, 8, State::none},
    Bit{"vaes", 7, 0, Reg::ecx, 9, State::avx},
    Bit{"vpclmulqdq", 7, 0, Reg::ecx, 10, State::avx},
    Bit{"avx512_vnni", 7, 0, Reg::ecx, 11, State::avx512},
    Bit{"avx512_bitalg", 7, 0, Reg::ecx, 12, State::avx512},
    Bit{"avx512_vpopcntdq", 7, 0, Reg::ecx, 14, State::avx512},
    Bit{"rdpid", 7, 0, Reg::ecx, 22, State::none},
    Bit{"cldemote", 7, 0, Reg::ecx, 25, State::none},
    Bit{"movdiri", 7, 0, Reg::ecx, 27, State::none},
    Bit{"movdir64b", 7, 0, Reg::ecx, 28, State::none},
    Bit{"avx512_4vnniw", 7, 0, Reg::edx, 2, State::avx512},
    Bit{"avx512_4fmaps", 7, 0, Reg::edx, 3, State::avx512},
    Bit{"avx512_vp2intersect", 7, 0, Reg::edx, 8, State::avx512},
    Bit{"serialize", 7, 0, Reg::edx, 14, State::none},
    Bit{"amx_bf16", 7, 0, Reg::edx, 22, State::amx},
    Bit{"avx512_fp16", 7, 0, Reg::edx, 23, State::avx512},
    Bit{"amx_tile", 7, 0, Reg::edx, 24, State::amx},
    Bit{"amx_int8", 7, 0, Reg::edx, 25, State::amx},
    Bit{"flush_l1d", 7, 0, Reg::edx, 28, State::none},
    Bit{"sha512", 7, 1, Reg::eax, 0, State::avx},
    Bit{"sm3", 7, 1, Reg::eax, 1, State::avx},
    Bit{"sm4", 7, 1, Reg::eax, 2, State::avx},
    Bit{"avx_vnni", 7, 1, Reg::eax, 4, State::avx},
    Bit{"avx512_bf16", 7, 1, Reg::eax, 5, State::avx512},
    Bit{"cmpccxadd", 7, 1, Reg::eax, 7, State::none},
    Bit{"amx_fp16", 7, 1, Reg::eax, 21, State::amx},
    Bit{"avx_ifma", 7, 1, Reg::eax, 23, State::avx},
    Bit{"avx_vnni_int8", 7, 1, Reg::edx, 4, State::avx},
    Bit{"avx_ne_convert", 7, 1, Reg::edx, 5, State::avx},
    Bit{"xsaveopt", 0xD, 1, Reg::eax, 0, State::xsave},
    Bit{"xsavec", 0xD, 1, Reg::eax, 1, State::xsave},
    Bit{"xgetbv1", 0xD, 1, Reg::eax, 2, State::xsave},
    Bit{"xsaves", 0xD, 1, Reg::eax, 3, State::xsave},
    Bit{"lahf_lm", k_ext + 1, 0, Reg::ecx, 0, State::none},
    Bit{"abm", k_ext + 1, 0, Reg::ecx, 5, State::none},
    Bit{"sse4a", k_ext + 1, 0, Reg::ecx, 6, State::none},
    Bit{"xop", k_ext + 1, 0, Reg::ecx, 11, State::avx},
    Bit{"fma4", k_ext + 1, 0, Reg::ecx, 16, State::avx},
    Bit{"tbm", k_ext + 1, 0, Reg::ecx, 21, State::none},
    Bit{"syscall", k_ext + 1, 0, Reg::edx, 11, State::none},
    Bit{"lm", k_ext + 1, 0, Reg::edx, 29, State::none},
    Bit{"clzero", k_ext + 8, 0, Reg::ebx, 0, State::none},
    Bit{"wbnoinvd", k_ext + 8, 0, Reg::ebx, 9, State::none},
};

std::uint32_t value_of(const CpuidRegisters& regs, Reg reg) {
  switch (reg) {
    case Reg::eax: return regs.eax;
    case Reg::ebx: return regs.ebx;
    case Reg::ecx: return regs.ecx;
    case Reg::edx: return regs.edx;
  }
  return 0;
}

void append_register(std::string& out, std::uint32_t value) {
  for (unsigned shift = 0; shift < 32; shift += 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

// CPUID's vendor and brand strings are ASCII (Intel SDM vol. 2A, CPUID leaves 0 and 80000002H-
// 80000004H), but a hypervisor or a recorded dump may put any bytes there: anything else is
// written \xNN, so it can neither break the facts' JSON nor add a line to NFD's feature file.
std::string ascii_text(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  return out;
}

// A leaf is valid only up to the highest one its range reports (0:EAX, 0x80000000:EAX).
bool leaf_valid(const CpuidSnapshot& s, std::uint32_t leaf, std::uint32_t subleaf) {
  if (leaf >= k_ext) {
    return leaf <= s.get(k_ext).eax;
  }
  if (leaf > s.get(0).eax) {
    return false;
  }
  return leaf != 7 || subleaf == 0 || s.get(7, 0).eax >= subleaf;
}

template <typename T>
bool parse_hex(std::string_view text, T& value) {
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, 16);
  return ec == std::errc() && ptr == end;
}

}  // namespace

CpuidRegisters CpuidSnapshot::get(std::uint32_t leaf, std::uint32_t subleaf) const {
  const auto it = leaves.find({leaf, subleaf});
  return it == leaves.end() ? CpuidRegisters{} : it->second;
}

CpuidSnapshot read_cpuid() {
  CpuidSnapshot snapshot;
#if defined(__x86_64__) || defined(__i386__)
  const auto query = [&](std::uint32_t leaf, std::uint32_t subleaf) {
    CpuidRegisters r;
    __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
    snapshot.leaves[{leaf, subleaf}] = r;
  };
  query(0, 0);
  query(k_ext, 0);
  const std::pair<std::uint32_t, std::uint32_t> wanted[] = {
      {1, 0}, {7, 0}, {7, 1}, {0xD, 1}, {k_ext + 1, 0}, {k_ext + 2, 0}, {k_ext + 3, 0}, {k_ext + 4, 0}, {k_ext + 8, 0}};
  for (const auto& [leaf, subleaf] : wanted) {
    if (leaf_valid(snapshot, leaf, subleaf)) {
      query(leaf, subleaf);
    }
  }
  // XGETBV faults unless the OS set CR4.OSXSAVE, which CPUID 1:ECX[27] mirrors.
  if ((snapshot.get(1).ecx >> 27) & 1U) {
    std::uint32_t low = 0;
    std::uint32_t high = 0;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    snapshot.xcr0 = (static_cast<std::uint64_t>(high) << 32) | low;
  }
#endif
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
  // 0 where the kernel predates AT_HWCAP2 on x86 (before 5.9): FSGSBASE was never enabled there.
  snapshot.hwcap2 = getauxval(AT_HWCAP2);
#endif
  return snapshot;
}

std::string format_cpuid_dump(const CpuidSnapshot& snapshot) {
  std::string out = "# hwimg CPUID dump: leaf.subleaf eax ebx ecx edx\n";
  for (const auto& [key, r] : snapshot.leaves) {
    out += fmt::format("{:08x}.{:x} {:08x} {:08x} {:08x} {:08x}\n", key.first, key.second, r.eax, r.ebx, r.ecx, r.edx);
  }
  out += fmt::format("xcr0 {:016x}\n", snapshot.xcr0);
  if (snapshot.hwcap2) out += fmt::format("hwcap2 {:x}\n", *snapshot.hwcap2);
  return out;
}

namespace {

// A word of a dump line and its 1-based column; the column past the line's end, with no text,
// where a word is missing.
struct DumpWord {
  std::string_view text;
  std::size_t column = 0;
};

std::vector<DumpWord> dump_words(std::string_view line) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  std::vector<DumpWord> words;
  for (std::size_t i = 0; i < line.size();) {
    if (blank(line[i])) {
      ++i;
      continue;
    }
    const auto start = i;
    while (i < line.size() && !blank(line[i])) ++i;
    words.push_back({line.substr(start, i - start), start + 1});
  }
  return words;
}

}  // namespace

Result<CpuidSnapshot> parse_cpuid_dump(std::string_view text, std::string_view file_name) {
  CpuidSnapshot snapshot;
  std::map<std::string, std::size_t> seen;  // what each line set, for a second line that sets it again
  std::size_t line_number = 0;
  for (const auto& line : util::split(text, '\n')) {
    ++line_number;
    const auto words = dump_words(line);
    if (words.empty() || words[0].text.starts_with('#')) continue;
    const auto word = [&](std::size_t i) { return i < words.size() ? words[i] : DumpWord{{}, line.size() + 1}; };
    const auto bad = [&](std::size_t i, std::string_view expected) {
      const auto at = word(i);
      return fail("failed to read CPUID dump {}:{}:{}: expected {}, found {}", file_name, line_number, at.column, expected,
                  at.text.empty() ? std::string("the end of the line") : "\"" + util::printable(at.text) + "\"");
    };
    const auto set_once = [&](std::string what) -> Result<void> {
      const auto [earlier, added] = seen.emplace(what, line_number);
      if (added) return {};
      return fail("failed to read CPUID dump {}:{}:{}: {} again (line {} set it)", file_name, line_number, words[0].column,
                  what, earlier->second);
    };
    const auto keyword = words[0].text;
    if (keyword == "xcr0" || keyword == "hwcap2") {
      std::uint64_t value = 0;
      if (!parse_hex(word(1).text, value)) return bad(1, "a 64-bit hex number");
      if (words.size() > 2) return bad(2, "the end of the line");
      HWIMG_TRY(set_once(std::string(keyword)));
      if (keyword == "xcr0") {
        snapshot.xcr0 = value;
      } else {
        snapshot.hwcap2 = value;
      }
      continue;
    }
    const auto dot = keyword.find('.');
    std::uint32_t leaf = 0;
    std::uint32_t subleaf = 0;
    if (dot == std::string_view::npos || !parse_hex(keyword.substr(0, dot), leaf) ||
        !parse_hex(keyword.substr(dot + 1), subleaf)) {
      return bad(0, "LEAF.SUBLEAF in hex (\"00000007.0\"), \"xcr0\" or \"hwcap2\"");
    }
    CpuidRegisters r;
    constexpr std::array<std::string_view, 4> names{"EAX", "EBX", "ECX", "EDX"};
    const std::array<std::uint32_t*, 4> registers{&r.eax, &r.ebx, &r.ecx, &r.edx};
    for (std::size_t i = 0; i < registers.size(); ++i) {
      if (!parse_hex(word(i + 1).text, *registers[i])) return bad(i + 1, fmt::format("{} as 32-bit hex", names[i]));
    }
    if (words.size() > 5) return bad(5, "the end of the line");
    HWIMG_TRY(set_once(fmt::format("leaf {:08x}.{:x}", leaf, subleaf)));
    snapshot.leaves[{leaf, subleaf}] = r;
  }
  return snapshot;
}

CpuFacts decode_x86(const CpuidSnapshot& s) {
  CpuFacts cpu;
  cpu.arch = hw::CpuArch::amd64;

  const auto leaf0 = s.get(0);
  std::string vendor;
  append_register(vendor, leaf0.ebx);
  append_register(vendor, leaf0.edx);
  append_register(vendor, leaf0.ecx);
  cpu.vendor = ascii_text(hw::x86_vendor_name(vendor));

  const auto signature = s.get(1).eax;
  const auto base_family = (signature >> 8) & 0xF;
  const auto base_model = (signature >> 4) & 0xF;
  const auto family = base_family + (base_family == 0xF ? (signature >> 20) & 0xFF : 0);
  const auto model = family >= 6 ? base_model | (((signature >> 16) & 0xF) << 4) : base_model;
  cpu.family = static_cast<int>(family);
  cpu.model = static_cast<int>(model);

  if (s.get(k_ext).eax >= k_ext + 4) {
    std::string brand;
    for (std::uint32_t leaf = k_ext + 2; leaf <= k_ext + 4; ++leaf) {
      const auto r = s.get(leaf);
      for (const auto value : {r.eax, r.ebx, r.ecx, r.edx}) {
        append_register(brand, value);
      }
    }
    brand.resize(std::min(brand.find('\0'), brand.size()));
    cpu.model_name = ascii_text(util::trim(brand));
  }

  const bool osxsave = ((s.get(1).ecx >> 27) & 1U) != 0;
  const auto xcr0 = osxsave ? s.xcr0 : 0;
  const auto state_enabled = [&](State state) {
    switch (state) {
      case State::none: return true;
      case State::xsave: return osxsave;
      case State::avx: return (xcr0 & 0x6) == 0x6;
      case State::avx512: return (xcr0 & 0xE6) == 0xE6;
      case State::amx: return (xcr0 & 0x60000) == 0x60000;
      case State::kernel_fsgsbase: return !s.hwcap2 || (*s.hwcap2 & k_hwcap2_fsgsbase) != 0;
    }
    return false;
  };
  for (const auto& bit : k_bits) {
    if (!leaf_valid(s, bit.leaf, bit.subleaf)) {
      continue;
    }
    const auto value = value_of(s.get(bit.leaf, bit.subleaf), bit.reg);
    if (((value >> bit.bit) & 1U) != 0 && state_enabled(bit.state)) {
      cpu.features.emplace_back(bit.name);
    }
  }
  std::ranges::sort(cpu.features);
  derive_cpu_facts(cpu);
  return cpu;
}

std::vector<std::string_view> x86_decodable_features() {
  std::vector<std::string_view> names;
  for (const auto& bit : k_bits) {
    names.push_back(bit.name);
  }
  return names;
}

}  // namespace hwimg::probe
