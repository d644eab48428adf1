#include "hwimg/hw/cpu_targets.hpp"

#include <algorithm>
#include <initializer_list>

#include "hwimg/util/strings.hpp"

namespace hwimg::hw {
namespace {

// One row of docs/compatibility.md#archspec-names: features are those added over the parents.
struct Row {
  std::string_view name;
  CpuArch arch;
  std::string_view vendor;
  std::string_view cpu_part;
  std::initializer_list<std::string_view> parents;
  std::initializer_list<std::string_view> added;
  std::initializer_list<GccFlags> gcc;
};

constexpr auto x86 = CpuArch::amd64;
constexpr auto arm = CpuArch::arm64;

// Named targets in archspec order. Parents are listed before their children. The generic levels
// come from cpu_levels (glibc's sets, so v2 includes `pni`, which archspec spells `sse3`).
const std::vector<Row>& named_rows() {
  static const std::vector<Row> rows{
      {"nehalem", x86, "Intel", "", {"x86-64-v2"},
       {"mmx", "sse", "sse2", "ssse3", "sse4_1", "sse4_2", "popcnt", "lahf_lm", "cx16"},
       {{4, 9, "-march=nehalem -mtune=nehalem"}, {4, 6, "-march=corei7 -mtune=corei7"}}},
      {"westmere", x86, "Intel", "", {"nehalem"}, {"aes", "pclmulqdq"},
       {{4, 9, "-march=westmere -mtune=westmere"}}},
      {"sandybridge", x86, "Intel", "", {"westmere"}, {"avx"},
       {{4, 9, "-march=sandybridge -mtune=sandybridge"}, {4, 6, "-march=corei7-avx -mtune=corei7-avx"}}},
      {"ivybridge", x86, "Intel", "", {"sandybridge"}, {"f16c", "rdrand"},
       {{4, 9, "-march=ivybridge -mtune=ivybridge"}, {4, 6, "-march=core-avx-i -mtune=core-avx-i"}}},
      {"haswell", x86, "Intel", "", {"ivybridge", "x86-64-v3"},
       {"abm", "avx2", "bmi1", "bmi2", "fma", "movbe", "xsave"},
       {{4, 9, "-march=haswell -mtune=haswell"}, {4, 8, "-march=core-avx2 -mtune=core-avx2"}}},
      {"broadwell", x86, "Intel", "", {"haswell"}, {"adx", "rdseed"},
       {{4, 9, "-march=broadwell -mtune=broadwell"}}},
      {"skylake", x86, "Intel", "", {"broadwell"}, {"clflushopt", "xsavec", "xsaveopt"},
       {{6, 0, "-march=skylake -mtune=skylake"}}},
      {"mic_knl", x86, "Intel", "", {"broadwell"}, {"avx512cd", "avx512er", "avx512f", "avx512pf"},
       {{5, 1, "-march=knl -mtune=knl"}}},
      {"skylake_avx512", x86, "Intel", "", {"skylake", "x86-64-v4"},
       {"avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl", "clwb"},
       {{6, 0, "-march=skylake-avx512 -mtune=skylake-avx512"}}},
      {"cannonlake", x86, "Intel", "", {"skylake", "x86-64-v4"},
       {"avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512ifma", "avx512vbmi", "avx512vl", "sha_ni"},
       {{8, 0, "-march=cannonlake -mtune=cannonlake"}}},
      {"cascadelake", x86, "Intel", "", {"skylake_avx512"}, {"avx512_vnni"},
       {{9, 0, "-march=cascadelake -mtune=cascadelake"}}},
      {"icelake", x86, "Intel", "", {"cascadelake", "cannonlake"},
       {"avx512_bitalg", "avx512_vbmi2", "avx512_vpopcntdq", "avx512ifma", "avx512vbmi", "gfni", "rdpid",
        "sha_ni", "vaes", "vpclmulqdq"},
       {{8, 0, "-march=icelake-client -mtune=icelake-client"}}},
      {"sapphirerapids", x86, "Intel", "", {"icelake"},
       {"amx_bf16", "amx_int8", "amx_tile", "avx512_bf16", "cldemote", "movdir64b", "movdiri", "serialize",
        "waitpkg"},
       {{11, 0, "-march=sapphirerapids -mtune=sapphirerapids"}}},
      {"alderlake", x86, "Intel", "", {"skylake"},
       {"avx_vnni", "clwb", "gfni", "movdir64b", "movdiri", "rdpid", "serialize", "sha_ni", "vaes",
        "vpclmulqdq", "waitpkg"},
       {{11, 0, "-march=alderlake -mtune=alderlake"}}},
      {"arrowlake", x86, "Intel", "", {"alderlake"},
       {"avx_ifma", "avx_ne_convert", "avx_vnni_int8", "cmpccxadd"},
       {{14, 0, "-march=arrowlake -mtune=arrowlake"}}},
      {"arrowlake_s", x86, "Intel", "", {"arrowlake"}, {"avx_vnni_int16", "sha512", "sm3", "sm4"},
       {{14, 0, "-march=arrowlake-s -mtune=arrowlake-s"}}},
      {"k10", x86, "AMD", "", {"x86-64-v1"},
       {"mmx", "sse", "sse2", "sse4a", "abm", "cx16", "3dnow", "3dnowext"},
       {{4, 3, "-march=amdfam10 -mtune=amdfam10"}}},
      {"bulldozer", x86, "AMD", "", {"x86-64-v2"},
       {"abm", "aes", "avx", "fma4", "pclmulqdq", "sse4a", "xop", "xsave"},
       {{4, 7, "-march=bdver1 -mtune=bdver1"}}},
      {"piledriver", x86, "AMD", "", {"bulldozer"}, {"bmi1", "f16c", "fma", "tbm"},
       {{4, 7, "-march=bdver2 -mtune=bdver2"}}},
      {"steamroller", x86, "AMD", "", {"piledriver"}, {"fsgsbase"}, {{4, 8, "-march=bdver3 -mtune=bdver3"}}},
      {"excavator", x86, "AMD", "", {"steamroller", "x86-64-v3"}, {"avx2", "bmi2", "movbe"},
       {{4, 9, "-march=bdver4 -mtune=bdver4"}}},
      {"zen", x86, "AMD", "", {"x86-64-v3"},
       {"aes", "clflushopt", "clzero", "fsgsbase", "pclmulqdq", "rdseed", "sse4a", "xsavec", "xsaveopt"},
       {{6, 0, "-march=znver1 -mtune=znver1"}}},
      {"zen2", x86, "AMD", "", {"zen"}, {"clwb"}, {{9, 0, "-march=znver2 -mtune=znver2"}}},
      {"zen3", x86, "AMD", "", {"zen2"}, {"pku", "vaes", "vpclmulqdq"}, {{10, 3, "-march=znver3 -mtune=znver3"}}},
      {"zen4", x86, "AMD", "", {"zen3", "x86-64-v4"},
       {"avx512_bf16", "avx512_bitalg", "avx512_vbmi2", "avx512_vnni", "avx512_vpopcntdq", "avx512bw",
        "avx512cd", "avx512dq", "avx512f", "avx512ifma", "avx512vbmi", "avx512vl", "flush_l1d", "gfni"},
       {{12, 3, "-march=znver4 -mtune=znver4"},
        {10, 3,
         "-march=znver3 -mtune=znver3 -mavx512f -mavx512dq -mavx512ifma -mavx512cd -mavx512bw -mavx512vl "
         "-mavx512vbmi -mavx512vbmi2 -mavx512vnni -mavx512bitalg"}}},
      {"zen5", x86, "AMD", "", {"zen4"}, {"avx512_vp2intersect", "avx_vnni", "movdir64b", "movdiri", "tsc_adjust"},
       {{14, 1, "-march=znver5 -mtune=znver5"}}},

      // aarch64: the armv8.x/9.x generics carry no features and are never detected; the reference
      // gives no first GCC version for the armv8.x spellings, so they are offered for any GCC.
      {"aarch64", arm, "generic", "", {}, {}, {{4, 8, "-march=armv8-a -mtune=generic"}}},
      {"armv8.1a", arm, "generic", "", {"aarch64"}, {}, {{0, 0, "-march=armv8.1-a -mtune=generic"}}},
      {"armv8.2a", arm, "generic", "", {"armv8.1a"}, {}, {{0, 0, "-march=armv8.2-a -mtune=generic"}}},
      {"armv8.3a", arm, "generic", "", {"armv8.2a"}, {}, {{0, 0, "-march=armv8.3-a -mtune=generic"}}},
      {"armv8.4a", arm, "generic", "", {"armv8.3a"}, {}, {{0, 0, "-march=armv8.4-a -mtune=generic"}}},
      {"armv8.5a", arm, "generic", "", {"armv8.4a"}, {}, {{0, 0, "-march=armv8.5-a -mtune=generic"}}},
      {"armv8.6a", arm, "generic", "", {"armv8.5a"}, {}, {{0, 0, "-march=armv8.6-a -mtune=generic"}}},
      {"armv9.0a", arm, "generic", "", {"armv8.5a"}, {}, {{12, 0, "-march=armv9-a -mtune=generic"}}},
      {"armv9.1a", arm, "generic", "", {"armv9.0a"}, {}, {}},
      {"armv9.2a", arm, "generic", "", {"armv9.1a"}, {}, {{13, 0, "-march=armv9.2-a -mtune=generic"}}},
      {"cortex_a72", arm, "ARM", "0xd08", {"aarch64"},
       {"fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "cpuid"}, {{6, 0, "-mcpu=cortex-a72"}}},
      {"neoverse_n1", arm, "ARM", "0xd0c", {"cortex_a72", "armv8.2a"},
       {"atomics", "fphp", "asimdhp", "asimdrdm", "lrcpc", "dcpop", "asimddp"}, {{9, 0, "-mcpu=neoverse-n1"}}},
      {"neoverse_v1", arm, "ARM", "0xd40", {"neoverse_n1", "armv8.4a"},
       {"jscvt", "fcma", "sha3", "sha512", "sve", "asimdfhm", "dit", "uscat", "ilrcpc", "flagm", "dcpodp",
        "svei8mm", "svebf16", "i8mm", "bf16", "dgh", "rng"},
       {{10, 3, "-mcpu=neoverse-v1"}, {10, 2, "-mcpu=zeus"}}},
      {"neoverse_n2", arm, "ARM", "0xd49", {"neoverse_n1", "armv9.0a"},
       {"jscvt", "fcma", "sha3", "sha512", "sve", "asimdfhm", "uscat", "ilrcpc", "flagm", "sb", "dcpodp", "sve2",
        "flagm2", "frint", "svei8mm", "svebf16", "i8mm", "bf16"},
       {{11, 0, "-mcpu=neoverse-n2"}}},
      {"neoverse_v2", arm, "ARM", "0xd4f", {"neoverse_n1", "armv9.0a"},
       {"jscvt", "fcma", "sha3", "sha512", "sve", "asimdfhm", "uscat", "ilrcpc", "flagm", "sb", "dcpodp", "sve2",
        "flagm2", "frint", "svei8mm", "svebf16", "i8mm", "bf16"},
       {{12, 3, "-mcpu=neoverse-v2"}, {12, 0, "-march=armv9-a+i8mm+bf16 -mtune=cortex-a710"},
        {11, 4, "-mcpu=neoverse-v2"}}},
      {"neoverse_v3ae", arm, "ARM", "0xd83", {"neoverse_v2", "armv9.2a"},
       {"afp", "bti", "dgh", "dit", "ecv", "paca", "pacg", "sm3", "sm4", "sveaes", "svebitperm", "svepmull",
        "svesha3", "svesm4", "wfxt"},
       {{15, 0, "-mcpu=neoverse-v3ae"}}},
      {"a64fx", arm, "Fujitsu", "0x001", {"armv8.2a"},
       {"fp", "asimd", "evtstrm", "sha1", "sha2", "crc32", "atomics", "cpuid", "asimdrdm", "fphp", "asimdhp",
        "fcma", "dcpop", "sve"},
       {{10, 3, "-mcpu=a64fx -msve-vector-bits=512"}}},
      {"thunderx2", arm, "Cavium", "0x0af", {"armv8.1a"},
       {"fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "atomics", "cpuid", "asimdrdm"},
       {{7, 0, "-mcpu=thunderx2t99"}}},
      {"ampere1", arm, "Ampere", "0xac3", {"neoverse_n1", "armv8.6a"},
       {"jscvt", "fcma", "sha3", "sha512", "asimdfhm", "dit", "uscat", "ilrcpc", "flagm", "ssbs", "sb", "paca",
        "pacg", "dcpodp", "flagm2", "frint", "i8mm", "bf16", "rng", "bti", "ecv"},
       {{12, 1, "-mcpu=ampere1"}, {12, 0, "-mcpu=neoverse-n1"}, {11, 3, "-mcpu=ampere1"},
        {11, 0, "-mcpu=neoverse-n1"}, {10, 5, "-mcpu=ampere1"}, {9, 0, "-mcpu=neoverse-n1"}}},
      {"ampere1a", arm, "Ampere", "0xac4", {"ampere1"}, {"sm3", "sm4"},
       {{12, 3, "-mcpu=ampere1a"}, {12, 0, "-mcpu=neoverse-n1"}, {11, 4, "-mcpu=ampere1a"},
        {11, 0, "-mcpu=neoverse-n1"}, {10, 5, "-mcpu=ampere1a"}, {9, 0, "-mcpu=neoverse-n1"}}},
  };
  return rows;
}

void add_ancestor(CpuTarget& target, std::string_view name) {
  if (std::ranges::find(target.ancestors, name) == target.ancestors.end()) {
    target.ancestors.push_back(name);
  }
}

CpuTarget level_target(X86Level level) {
  static constexpr std::string_view names[] = {"x86-64-v1", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  static constexpr std::string_view flags[] = {
      "-march=x86-64 -mtune=generic", "-march=x86-64-v2 -mtune=generic", "-march=x86-64-v3 -mtune=generic",
      "-march=x86-64-v4 -mtune=generic"};
  const auto n = static_cast<std::size_t>(x86_level_number(level) - 1);
  CpuTarget target;
  target.name = names[n];
  target.vendor = "generic";
  target.level = level;
  if (level != X86Level::v1) {
    target.parents = {names[n - 1]};
    for (std::size_t k = n; k-- > 0;) {
      target.ancestors.push_back(names[k]);
    }
    for (int k = 2; k <= x86_level_number(level); ++k) {
      for (const auto feature : x86_level_added_features(static_cast<X86Level>(k))) {
        target.features.emplace(feature);
      }
    }
  }
  target.gcc = {level == X86Level::v1 ? GccFlags{4, 2, flags[n]} : GccFlags{11, 1, flags[n]}};
  return target;
}

std::vector<CpuTarget> build_table() {
  std::vector<CpuTarget> table;
  for (const auto level : {X86Level::v1, X86Level::v2, X86Level::v3, X86Level::v4}) {
    table.push_back(level_target(level));
  }
  for (const auto& row : named_rows()) {
    CpuTarget target;
    target.name = row.name;
    target.arch = row.arch;
    target.vendor = row.vendor;
    target.cpu_part = row.cpu_part;
    target.parents.assign(row.parents.begin(), row.parents.end());
    target.gcc.assign(row.gcc.begin(), row.gcc.end());
    // The union over every parent: no archspec entry drops a parent's feature.
    for (const auto parent : row.parents) {
      const auto it = std::ranges::find(table, parent, &CpuTarget::name);
      target.features.insert(it->features.begin(), it->features.end());
      add_ancestor(target, parent);
      for (const auto name : it->ancestors) {
        add_ancestor(target, name);
      }
    }
    for (const auto feature : row.added) {
      target.features.emplace(feature);
    }
    target.level = row.arch == CpuArch::amd64 ? x86_level_of(target.features) : X86Level::v1;
    table.push_back(std::move(target));
  }
  return table;
}

bool never_detected(const CpuTarget& target) {
  // archspec: aarch64's armv8.x/9.x generics have no features, so they would match anything.
  return target.arch == CpuArch::arm64 && target.is_generic() && target.name != "aarch64";
}

// archspec's ordering: more ancestors, then more features.
bool deeper(const CpuTarget& a, const CpuTarget& b) {
  const auto depth_a = ancestor_count(a);
  const auto depth_b = ancestor_count(b);
  return depth_a != depth_b ? depth_a > depth_b : a.features.size() > b.features.size();
}

// cpu_target_compatible without collecting what is missing: the host matcher asks it of every target.
bool runs_on(const CpuTarget& target, std::string_view vendor, const FeatureSet& features) {
  return (target.is_generic() || target.vendor == vendor) &&
         std::ranges::all_of(target.features, [&](const std::string& feature) {
           return features.contains(feature) || !is_instruction_set_feature(feature);
         });
}

}  // namespace

std::span<const CpuTarget> cpu_targets() {
  static const std::vector<CpuTarget> table = build_table();
  return table;
}

const CpuTarget* find_cpu_target(std::string_view name) {
  std::string_view wanted = name;
  if (const auto level = parse_x86_level(name)) {
    wanted = cpu_targets()[static_cast<std::size_t>(x86_level_number(*level) - 1)].name;
  }
  const auto targets = cpu_targets();
  const auto it = std::ranges::find(targets, wanted, &CpuTarget::name);
  return it == targets.end() ? nullptr : &*it;
}

std::vector<std::string> cpu_target_names() {
  std::vector<std::string> names;
  for (const auto& target : cpu_targets()) {
    names.emplace_back(target.name);
  }
  return names;
}

bool descends_from(const CpuTarget& target, std::string_view ancestor) {
  return target.name == ancestor || std::ranges::find(target.ancestors, ancestor) != target.ancestors.end();
}

std::size_t ancestor_count(const CpuTarget& target) {
  return target.ancestors.size();
}

std::optional<std::string> gcc_flags(const CpuTarget& target, int gcc_major, int gcc_minor) {
  for (const auto& entry : target.gcc) {
    if (gcc_major > entry.major || (gcc_major == entry.major && gcc_minor >= entry.minor)) {
      return std::string(entry.flags);
    }
  }
  return std::nullopt;
}

CpuTargetCheck cpu_target_compatible(const CpuTarget& target, std::string_view host_vendor,
                                     const FeatureSet& host_features) {
  CpuTargetCheck check;
  check.vendor_matches = target.is_generic() || target.vendor == host_vendor;
  for (const auto& feature : target.features) {
    if (is_instruction_set_feature(feature) && !host_features.contains(feature)) {
      check.missing_features.push_back(feature);
    }
  }
  return check;
}

const CpuTarget& best_cpu_target(CpuArch arch, std::string_view vendor, const FeatureSet& features,
                                 std::string_view cpu_part) {
  std::vector<const CpuTarget*> compatible;
  for (const auto& target : cpu_targets()) {
    if (target.arch == arch && !never_detected(target) && runs_on(target, vendor, features)) {
      compatible.push_back(&target);
    }
  }
  // The root of each architecture has no features, so there is always a generic candidate.
  const CpuTarget* best_generic = nullptr;
  for (const auto* target : compatible) {
    if (target->is_generic() && (best_generic == nullptr || deeper(*target, *best_generic))) {
      best_generic = target;
    }
  }
  if (!cpu_part.empty()) {
    const auto same_part = [&](const CpuTarget* t) { return t->cpu_part == cpu_part; };
    if (std::ranges::any_of(compatible, same_part)) {
      std::erase_if(compatible, [&](const CpuTarget* t) { return !same_part(t); });
    }
  }
  const CpuTarget* best = best_generic;
  for (const auto* target : compatible) {
    if (!target->is_generic() && target != best_generic && descends_from(*target, best_generic->name) &&
        (best == best_generic || deeper(*target, *best))) {
      best = target;
    }
  }
  return *best;
}

const CpuTarget* best_microarch(CpuArch arch, std::string_view vendor, const FeatureSet& features,
                                std::string_view cpu_part) {
  const auto& best = best_cpu_target(arch, vendor, features, cpu_part);
  return best.is_generic() ? nullptr : &best;
}

std::string x86_vendor_name(std::string_view cpuid_vendor) {
  if (cpuid_vendor == "GenuineIntel") {
    return "Intel";
  }
  if (cpuid_vendor == "AuthenticAMD") {
    return "AMD";
  }
  if (cpuid_vendor == "HygonGenuine") {
    return "Hygon";
  }
  return std::string(util::trim(cpuid_vendor));
}

std::string arm_vendor_name(std::string_view implementer) {
  static constexpr std::pair<std::string_view, std::string_view> vendors[] = {
      {"0x41", "ARM"},  {"0x42", "Broadcom"}, {"0x43", "Cavium"},  {"0x46", "Fujitsu"},
      {"0x48", "HiSilicon"}, {"0x4e", "NVIDIA"}, {"0x50", "APM"}, {"0x51", "Qualcomm"},
      {"0x53", "Samsung"}, {"0x56", "Marvell"}, {"0x61", "Apple"}, {"0xc0", "Ampere"}};
  const auto code = util::to_lower(util::trim(implementer));
  for (const auto& [hex, name] : vendors) {
    if (code == hex) {
      return std::string(name);
    }
  }
  return code;
}

}  // namespace hwimg::hw
