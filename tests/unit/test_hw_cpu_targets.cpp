#include <doctest/doctest.h>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/util/strings.hpp"

using namespace hwimg::hw;

namespace {
const CpuTarget& target(std::string_view name) {
  const auto* found = find_cpu_target(name);
  REQUIRE_MESSAGE(found != nullptr, name);
  return *found;
}

FeatureSet with(const FeatureSet& base, std::initializer_list<const char*> more) {
  FeatureSet set = base;
  for (const auto* name : more) {
    set.emplace(name);
  }
  return set;
}

FeatureSet without(const FeatureSet& base, std::initializer_list<const char*> less) {
  FeatureSet set = base;
  for (const auto* name : less) {
    set.erase(name);
  }
  return set;
}

std::string_view best_name(CpuArch arch, std::string_view vendor, const FeatureSet& features,
                           std::string_view part = {}) {
  return best_cpu_target(arch, vendor, features, part).name;
}
}  // namespace

TEST_CASE("levels and archspec names are found, with aliases") {
  CHECK(target("x86-64-v3").name == "x86-64-v3");
  CHECK(target("x86_64_v3").name == "x86-64-v3");
  CHECK(target("x86-64").name == "x86-64-v1");
  CHECK(target("zen4").vendor == "AMD");
  CHECK(target("neoverse_v2").arch == CpuArch::arm64);
  CHECK(find_cpu_target("zen9") == nullptr);
  const auto names = cpu_target_names();
  CHECK(hwimg::util::did_you_mean("zenn4", names) == " (did you mean zen4?)");
  CHECK(hwimg::util::did_you_mean("skylake-avx512", names) == " (did you mean skylake_avx512?)");
}

TEST_CASE("every archspec x86 target named by the brief exists with its level") {
  const std::pair<const char*, X86Level> expected[] = {
      {"haswell", X86Level::v3},       {"broadwell", X86Level::v3},   {"skylake", X86Level::v3},
      {"skylake_avx512", X86Level::v4}, {"cascadelake", X86Level::v4}, {"icelake", X86Level::v4},
      {"sapphirerapids", X86Level::v4}, {"zen", X86Level::v3},         {"zen2", X86Level::v3},
      {"zen3", X86Level::v3},           {"zen4", X86Level::v4},        {"zen5", X86Level::v4},
      {"sandybridge", X86Level::v2},    {"k10", X86Level::v1},         {"nocona", X86Level::v1},
      {"core2", X86Level::v1},          {"graniterapids", X86Level::v4}};
  for (const auto& [name, level] : expected) {
    CAPTURE(name);
    CHECK(target(name).level == level);
  }
}

TEST_CASE("features are inherited from every parent") {
  const auto& zen4 = target("zen4");
  CHECK(zen4.features.contains("clwb"));      // from zen2
  CHECK(zen4.features.contains("pni"));       // from x86-64-v2
  CHECK(zen4.features.contains("avx512vl"));  // from x86-64-v4
  CHECK(zen4.features.contains("flush_l1d"));
  const auto& n1 = target("neoverse_n1");
  CHECK(n1.features.contains("crc32"));  // from cortex_a72
  CHECK(n1.features.contains("asimddp"));
  CHECK(target("neoverse_v2").features.contains("sve2"));
  CHECK(descends_from(target("icelake"), "cannonlake"));
  CHECK(descends_from(target("icelake"), "x86-64-v4"));
  CHECK_FALSE(descends_from(target("zen3"), "x86-64-v4"));
  CHECK(ancestor_count(target("x86-64-v4")) == 3);
}

TEST_CASE("GCC flags follow the version ranges of the reference") {
  CHECK(gcc_flags(target("haswell"), 12, 2) == "-march=haswell -mtune=haswell");
  CHECK(gcc_flags(target("haswell"), 4, 8) == "-march=core-avx2 -mtune=core-avx2");
  CHECK(gcc_flags(target("icelake"), 12, 2) == "-march=icelake-client -mtune=icelake-client");
  CHECK(gcc_flags(target("x86-64-v3"), 12, 2) == "-march=x86-64-v3 -mtune=generic");
  CHECK(gcc_flags(target("zen4"), 13, 1) == "-march=znver4 -mtune=znver4");
  CHECK(gcc_flags(target("zen4"), 12, 2)->starts_with("-march=znver3 -mtune=znver3 -mavx512f"));
  CHECK_FALSE(gcc_flags(target("zen5"), 12, 2).has_value());
  CHECK(gcc_flags(target("neoverse_v2"), 12, 2) == "-march=armv9-a+i8mm+bf16 -mtune=cortex-a710");
  CHECK(gcc_flags(target("neoverse_v2"), 12, 3) == "-mcpu=neoverse-v2");
  CHECK(gcc_flags(target("neoverse_v2"), 11, 4) == "-mcpu=neoverse-v2");
  CHECK(gcc_flags(target("ampere1a"), 12, 2) == "-mcpu=neoverse-n1");
  CHECK(gcc_flags(target("neoverse_n1"), 8, 2) == "-march=armv8.2-a+fp16+rcpc+dotprod+crypto -mtune=cortex-a72");
  CHECK(gcc_flags(target("armv9.2a"), 13, 1) == "-march=armv9.2-a -mtune=generic");
  CHECK(gcc_flags(target("m1"), 15, 1) == "-march=armv8.4-a -mtune=generic");  // archspec's first match
  CHECK(gcc_flags(target("graniterapids"), 13, 1) == "-march=graniterapids -mtune=graniterapids");
  CHECK_FALSE(gcc_flags(target("graniterapids"), 12, 3).has_value());
}

TEST_CASE("compatibility names the missing instruction-set features and ignores non-ISA flags") {
  const auto& zen4 = target("zen4");
  auto host = without(zen4.features, {"pku", "flush_l1d"});
  CHECK(cpu_target_compatible(zen4, "AMD", host).compatible());

  host.erase("avx512_bf16");
  host.erase("gfni");
  const auto check = cpu_target_compatible(zen4, "AMD", host);
  CHECK_FALSE(check.compatible());
  CHECK(check.missing_features == std::vector<std::string>{"avx512_bf16", "gfni"});

  const auto wrong_vendor = cpu_target_compatible(zen4, "Intel", zen4.features);
  CHECK_FALSE(wrong_vendor.vendor_matches);
  CHECK(cpu_target_compatible(target("x86-64-v3"), "Intel", x86_level_features(X86Level::v3)).compatible());
}

TEST_CASE("the best microarchitecture follows archspec's rules") {
  const auto zen4 = target("zen4").features;
  // A cloud VM hiding pku and flush_l1d still reports zen4.
  CHECK(best_name(CpuArch::amd64, "AMD", without(zen4, {"pku", "flush_l1d"})) == "zen4");
  // A Zen 4 lacking an ISA feature falls back to the generic level, never to zen3 below v4.
  CHECK(best_name(CpuArch::amd64, "AMD", without(zen4, {"avx512_bf16"})) == "x86-64-v4");
  CHECK(best_microarch(CpuArch::amd64, "AMD", without(zen4, {"avx512_bf16"})) == nullptr);
  // Zen 4 with AVX-512 state disabled: v3, and zen3 descends from v3.
  auto no_avx512 = zen4;
  std::erase_if(no_avx512, [](const std::string& f) { return f.starts_with("avx512"); });
  CHECK(best_name(CpuArch::amd64, "AMD", no_avx512) == "zen3");
  // Vendor rule: Intel features on an AMD vendor give a level.
  CHECK(best_name(CpuArch::amd64, "AMD", target("skylake").features) == "x86-64-v3");
  CHECK(best_name(CpuArch::amd64, "Intel", target("cascadelake").features) == "cascadelake");
  CHECK(best_name(CpuArch::amd64, "Intel", with(target("icelake").features, {"avx512_fp16"})) == "icelake");
  CHECK(best_name(CpuArch::amd64, "Intel", target("sapphirerapids").features) == "sapphirerapids");
  CHECK(best_name(CpuArch::amd64, "Intel", x86_level_features(X86Level::v2)) == "nehalem");
  CHECK(best_name(CpuArch::amd64, "Hygon", x86_level_features(X86Level::v2)) == "x86-64-v2");
  // A Core 2 (SSSE3, no SSE4) is core2 on v1; Granite Rapids is Sapphire Rapids with AMX-FP16.
  CHECK(best_name(CpuArch::amd64, "Intel", with(x86_level_features(X86Level::v1), {"pni", "ssse3"})) == "core2");
  const auto spr = target("sapphirerapids").features;
  CHECK(best_name(CpuArch::amd64, "Intel", with(spr, {"avx512_fp16", "amx_fp16"})) == "graniterapids");
  CHECK(best_name(CpuArch::amd64, "Intel", with(spr, {"avx512_fp16"})) == "sapphirerapids");
}

TEST_CASE("a CPU a hypervisor keeps out of its microarchitecture gets the features it lacks") {
  const auto* zen5 = find_cpu_target("zen5");
  REQUIRE(zen5 != nullptr);
  // What the Turin VM of tests/data/probe/cpuid/dev-vm-turin-oxide.txt hides.
  auto vm = zen5->features;
  vm.erase("fsgsbase");
  vm.erase("rdseed");
  REQUIRE(best_microarch(CpuArch::amd64, "AMD", vm) == nullptr);
  const auto near = nearest_missed_target(CpuArch::amd64, "AMD", vm);
  REQUIRE(near.has_value());
  CHECK(near->target->name == "zen5");  // the deepest of those that miss the same two
  CHECK(near->missing == std::vector<std::string>{"fsgsbase", "rdseed"});
  CHECK_FALSE(nearest_missed_target(CpuArch::amd64, "AMD", vm, {}, 1).has_value());
  // The deepest target itself, or a CPU far from any of its vendor's: nothing to say.
  CHECK_FALSE(nearest_missed_target(CpuArch::amd64, "AMD", zen5->features).has_value());
  CHECK_FALSE(nearest_missed_target(CpuArch::amd64, "AMD", find_cpu_target("x86-64-v2")->features).has_value());
  CHECK_FALSE(nearest_missed_target(CpuArch::amd64, "VIA", vm).has_value());
  // A CPU that is some named target, one step short of a deeper one.
  auto spr_vm = find_cpu_target("sapphirerapids")->features;
  spr_vm.erase("waitpkg");
  REQUIRE(best_microarch(CpuArch::amd64, "Intel", spr_vm) != nullptr);
  CHECK(best_microarch(CpuArch::amd64, "Intel", spr_vm)->name == "icelake");
  const auto beyond = nearest_missed_target(CpuArch::amd64, "Intel", spr_vm);
  REQUIRE(beyond.has_value());
  CHECK(beyond->target->name == "sapphirerapids");
  CHECK(beyond->missing == std::vector<std::string>{"waitpkg"});
}

TEST_CASE("aarch64 targets use the vendor, the features and the CPU part") {
  const auto v2 = target("neoverse_v2").features;
  CHECK(best_name(CpuArch::arm64, "ARM", v2, "0xd4f") == "neoverse_v2");
  CHECK(best_name(CpuArch::arm64, "ARM", v2, "0xd49") == "neoverse_n2");
  CHECK(best_name(CpuArch::arm64, "ARM", target("neoverse_n1").features, "0xd0c") == "neoverse_n1");
  CHECK(best_name(CpuArch::arm64, "ARM", without(target("neoverse_n1").features, {"evtstrm"}), "0xd0c") ==
        "neoverse_n1");
  CHECK(best_name(CpuArch::arm64, "Unknown", v2, "0xd49") == "aarch64");
  CHECK(arm_vendor_name("0x41") == "ARM");
  CHECK(arm_vendor_name("0xc0") == "Ampere");
  CHECK(arm_vendor_name("0x6d") == "0x6d");
  CHECK(x86_vendor_name("AuthenticAMD") == "AMD");
  CHECK(x86_vendor_name("GenuineIntel") == "Intel");
  // Apple's parts are archspec's for m1 and m2; m3 and m4 have none, so features decide.
  CHECK(best_name(CpuArch::arm64, "Apple", target("m2").features, "0x032") == "m2");
  CHECK(best_name(CpuArch::arm64, "Apple", target("m1").features, "0x022") == "m1");
  CHECK(best_name(CpuArch::arm64, "Apple", target("m4").features) == "m4");
}

TEST_CASE("any vendor spelling a facts file carries becomes NFD's") {
  CHECK(cpu_vendor_name("AuthenticAMD") == "AMD");
  CHECK(cpu_vendor_name(" GenuineIntel ") == "Intel");
  CHECK(cpu_vendor_name("HygonGenuine") == "Hygon");
  CHECK(cpu_vendor_name("amd") == "AMD");
  CHECK(cpu_vendor_name("INTEL") == "Intel");
  CHECK(cpu_vendor_name("0x41") == "ARM");
  CHECK(cpu_vendor_name("0xC0") == "Ampere");
  CHECK(cpu_vendor_name("apple") == "Apple");
  CHECK(cpu_vendor_name("Ampere") == "Ampere");
  CHECK(cpu_vendor_name("0x6d") == "0x6d");
  CHECK(cpu_vendor_name("Zhaoxin") == "Zhaoxin");
  CHECK(cpu_vendor_name("") == "");
}
