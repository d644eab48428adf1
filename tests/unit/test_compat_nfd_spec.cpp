#include <doctest/doctest.h>

#include "hwimg/compat/nfd_cpuid.hpp"
#include "hwimg/compat/nfd_spec.hpp"
#include "hwimg/hw/cpu_levels.hpp"
#include "hwimg/oci/media_types.hpp"

using namespace hwimg;

namespace {

oci::Descriptor nfd_test_variant(oci::Annotations annotations, std::string architecture = "amd64",
                                 std::string variant = "v3") {
  return oci::Descriptor{std::string(oci::media_type::manifest), oci::Digest::sha256_of("variant"), 100,
                         oci::Platform{"linux", std::move(architecture), std::move(variant)}, std::move(annotations)};
}

// Every known compute capability but 9.0, which sm_90 SASS alone serves.
std::string nfd_unserved_by_sm90() {
  std::string out;
  for (const auto* capability : {"3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0",
                                 "8.6", "8.7", "8.8", "8.9", "10.0", "10.1", "10.3", "10.7", "11.0", "12.0", "12.1"}) {
    out += fmt::format("        hwimg.org/nvidia.gpu.compute-capability.{}: {{op: DoesNotExist}}\n", capability);
  }
  return out;
}

}  // namespace

TEST_CASE("the NFD spec of a CUDA 12.8 sm_90 x86-64-v3 variant with avx512f, exactly") {
  const auto variant = nfd_test_variant({{"org.hwimg.variant", "cuda12.8-sm_90-x86-64-v3"},
                                         {"org.hwimg.cpu.level", "x86-64-v3"},
                                         {"org.hwimg.cpu.features", "avx512f"},
                                         {"org.hwimg.cuda.version", "12.8"},
                                         {"org.hwimg.gpu.targets", "sm_90"}});
  const auto yaml = compat::nfd_spec_yaml(variant);
  REQUIRE(yaml);
  const std::string expected =
      "version: v1alpha1\n"
      "compatibilities:\n"
      "- description: \"hwimg variant cuda12.8-sm_90-x86-64-v3\"\n"
      "  rules:\n"
      "  - name: \"cpu\"\n"
      "    matchFeatures:\n"
      "    - feature: cpu.cpuid\n"
      "      matchExpressions:\n"
      "        X86_64_V3: {op: Exists}\n"
      "        AVX512F: {op: Exists}\n"
      "  - name: \"nvidia-gpu\"\n"
      "    matchFeatures:\n"
      "    - feature: pci.device\n"
      "      matchExpressions:\n"
      "        class: {op: In, value: [\"0300\", \"0302\"]}\n"
      "        vendor: {op: In, value: [\"10de\"]}\n"
      "  - name: \"cuda-driver\"\n"
      "    matchFeatures:\n"
      "    - feature: local.label\n"
      "      matchExpressions:\n"
      "        hwimg.org/nvidia.cuda: {op: Ge, value: [\"12.8\"], type: version}\n"
      "  - name: \"gpu-code\"\n"
      "    matchFeatures:\n"
      "    - feature: local.label\n"
      "      matchName: {op: In, value: [\"hwimg.org/nvidia.gpu.compute-capability.9.0\"]}\n"
      "      matchExpressions:\n"
      + nfd_unserved_by_sm90();
  CHECK(*yaml == expected);

  SUBCASE("deterministic: the same variant gives the same bytes, whatever the annotation order") {
    auto again = variant;
    CHECK(compat::nfd_spec_yaml(again).value() == *yaml);
    again.annotations["org.hwimg.cpu.features"] = " avx512f ";
    CHECK(compat::nfd_spec_yaml(again).value() == *yaml);
  }
}

TEST_CASE("a named target adds its vendor and features beyond its level; NFD's missing flags are named") {
  const auto yaml = compat::nfd_spec_yaml(
      nfd_test_variant({{"org.hwimg.variant", "cpu-zen4"}, {"org.hwimg.cpu.level", "x86-64-v4"},
                        {"org.hwimg.cpu.target", "zen4"}, {"org.hwimg.cpu.features", "clwb,gfni"}},
                       "amd64", "v4"));
  REQUIRE(yaml);
  CHECK(yaml->find("        X86_64_V4: {op: Exists}\n") != std::string::npos);
  CHECK(yaml->find("        GFNI: {op: Exists}\n") != std::string::npos);
  CHECK(yaml->find("        AVX512BF16: {op: Exists}\n") != std::string::npos);  // zen4's, not listed
  CHECK(yaml->find("AVX512F:") == std::string::npos);                             // implied by V4
  const auto comment = yaml->find("        # also needed, no NFD cpu.cpuid flag: ");
  REQUIRE(comment != std::string::npos);
  CHECK(yaml->substr(comment, yaml->find('\n', comment) - comment).find("clwb") != std::string::npos);
  CHECK(yaml->find("    - feature: cpu.model\n      matchExpressions:\n        vendor_id: {op: In, value: [\"AMD\"]}\n") !=
        std::string::npos);
  CHECK(yaml->find("pci.device") == std::string::npos);
}

TEST_CASE("a baseline CPU variant needs X86_64_V1 only; a bundled driver must be equal") {
  const auto yaml = compat::nfd_spec_yaml(nfd_test_variant(
      {{"org.hwimg.variant", "cpu-x86-64-v1"}, {"org.hwimg.cpu.level", "x86-64-v1"},
       {"org.hwimg.driver.bundled", "535.104.05"}},
      "amd64", ""));
  REQUIRE(yaml);
  CHECK(*yaml == "version: v1alpha1\ncompatibilities:\n- description: \"hwimg variant cpu-x86-64-v1\"\n  rules:\n"
                 "  - name: \"cpu\"\n    matchFeatures:\n    - feature: cpu.cpuid\n      matchExpressions:\n"
                 "        X86_64_V1: {op: Exists}\n"
                 "  - name: \"bundled-driver\"\n    matchFeatures:\n    - feature: local.label\n      matchExpressions:\n"
                 "        hwimg.org/nvidia.driver: {op: In, value: [\"535.104.05\"]}\n");
}

TEST_CASE("unreadable annotations name the variant and the key") {
  const auto bad_level = compat::nfd_spec_yaml(
      nfd_test_variant({{"org.hwimg.variant", "odd"}, {"org.hwimg.cpu.level", "x86-64-v9"}}));
  REQUIRE_FALSE(bad_level);
  CHECK(bad_level.error().message ==
        "failed to describe variant odd for NFD: unknown CPU level \"x86-64-v9\" in org.hwimg.cpu.level");
  const auto bad_cuda = compat::nfd_spec_yaml(nfd_test_variant({{"org.hwimg.variant", "odd"}, {"org.hwimg.cuda.version", "12"}}));
  REQUIRE_FALSE(bad_cuda);
  CHECK(bad_cuda.error().message ==
        "failed to describe variant odd for NFD: \"12\" in org.hwimg.cuda.version is not a CUDA version M.m");
}

TEST_CASE("every x86-64 level feature has an NFD cpu.cpuid flag") {
  for (const auto level : {hw::X86Level::v1, hw::X86Level::v2, hw::X86Level::v3, hw::X86Level::v4}) {
    for (const auto& feature : hw::x86_level_features(level)) {
      CHECK_MESSAGE(compat::nfd_cpuid_flag(hw::CpuArch::amd64, feature).has_value(), feature);
    }
  }
  CHECK(compat::nfd_cpuid_flag(hw::CpuArch::amd64, "fma") == "FMA3");
  CHECK(compat::nfd_cpuid_flag(hw::CpuArch::amd64, "pni") == "SSE3");
  CHECK(compat::nfd_cpuid_flag(hw::CpuArch::amd64, "aes") == "AESNI");
  CHECK(compat::nfd_cpuid_flag(hw::CpuArch::arm64, "aes") == "AESARM");
  CHECK_FALSE(compat::nfd_cpuid_flag(hw::CpuArch::amd64, "clwb"));
}
