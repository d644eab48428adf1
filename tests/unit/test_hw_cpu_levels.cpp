#include <doctest/doctest.h>

#include <vector>

#include "hwimg/hw/cpu_levels.hpp"

using namespace hwimg::hw;

namespace {
FeatureSet set_of(std::initializer_list<const char*> names) {
  FeatureSet set;
  for (const auto* name : names) {
    set.emplace(name);
  }
  return set;
}
}  // namespace

TEST_CASE("x86-64 levels are decided by glibc's feature sets") {
  auto features = x86_level_features(X86Level::v2);
  CHECK(x86_level_of(features) == X86Level::v2);
  features.erase("pni");
  CHECK(x86_level_of(features) == X86Level::v1);

  auto v4 = x86_level_features(X86Level::v4);
  CHECK(x86_level_of(v4) == X86Level::v4);
  v4.erase("avx512vl");
  CHECK(x86_level_of(v4) == X86Level::v3);
  v4.erase("bmi1");
  CHECK(x86_level_of(v4) == X86Level::v2);
  CHECK(x86_level_of({}) == X86Level::v1);
}

TEST_CASE("a level's features include the lower levels' and only those") {
  const auto v3 = x86_level_features(X86Level::v3);
  CHECK(v3.contains("sse2"));
  CHECK(v3.contains("ssse3"));
  CHECK(v3.contains("xsave"));
  CHECK_FALSE(v3.contains("avx512f"));
  CHECK(v3.size() == 8 + 7 + 9);
  CHECK(x86_level_added_features(X86Level::v4).size() == 5);
}

TEST_CASE("level names, archspec spellings and OCI variants convert both ways") {
  CHECK(x86_level_name(X86Level::v3) == "x86-64-v3");
  CHECK(parse_x86_level("x86-64-v3") == X86Level::v3);
  CHECK(parse_x86_level("x86_64_v4") == X86Level::v4);
  CHECK(parse_x86_level("x86-64") == X86Level::v1);
  CHECK(parse_x86_level("x86-64-v1") == X86Level::v1);
  CHECK_FALSE(parse_x86_level("x86-64-v5").has_value());
  CHECK_FALSE(parse_x86_level("v3").has_value());
  CHECK(oci_variant(X86Level::v1).empty());
  CHECK(oci_variant(X86Level::v2) == "v2");
  CHECK(oci_variant(X86Level::v4) == "v4");
  CHECK(x86_level_from_oci_variant("") == X86Level::v1);
  CHECK(x86_level_from_oci_variant("v1") == X86Level::v1);
  CHECK(x86_level_from_oci_variant("v3") == X86Level::v3);
  CHECK_FALSE(x86_level_from_oci_variant("v8").has_value());
  CHECK(X86Level::v2 < X86Level::v3);
}

TEST_CASE("feature names are canonicalised to /proc/cpuinfo spellings") {
  const std::vector<std::string> names{"sse3", "lzcnt", "avx2"};
  CHECK(make_feature_set(names) == set_of({"pni", "abm", "avx2"}));
  CHECK_FALSE(is_instruction_set_feature("pku"));
  CHECK_FALSE(is_instruction_set_feature("flush_l1d"));
  CHECK_FALSE(is_instruction_set_feature("tsc_adjust"));
  CHECK_FALSE(is_instruction_set_feature("evtstrm"));
  CHECK(is_instruction_set_feature("avx512f"));
}

TEST_CASE("CPU architectures use OCI names and accept the kernel's") {
  CHECK(parse_cpu_arch("x86_64") == CpuArch::amd64);
  CHECK(parse_cpu_arch("aarch64") == CpuArch::arm64);
  CHECK(parse_cpu_arch("arm64") == CpuArch::arm64);
  CHECK_FALSE(parse_cpu_arch("riscv64").has_value());
  CHECK(cpu_arch_name(CpuArch::amd64) == "amd64");
}
