#include <algorithm>

#include <doctest/doctest.h>

#include "hwimg/hw/gpu_flags.hpp"
#include "hwimg/hw/gpu_target.hpp"

using namespace hwimg::hw;

namespace {

GpuTarget t(std::string_view name) { return parse_gpu_target(name).value(); }

std::string toolkit_error(std::string_view cuda, std::string_view target) {
  const auto result = check_toolkit_supports(*parse_cuda_version(cuda), t(target));
  return result ? "" : result.error().message;
}

}  // namespace

TEST_CASE("target names parse into kind, capability and features and print back") {
  const auto sm90a = t("sm_90a");
  CHECK(sm90a.kind == CodeKind::sass);
  CHECK(sm90a.capability == ComputeCapability{9, 0});
  CHECK(sm90a.features == ArchFeatures::arch_specific);
  CHECK(t("compute_100f").kind == CodeKind::ptx);
  CHECK(t("compute_100f").capability == ComputeCapability{10, 0});
  CHECK(t("compute_100f").features == ArchFeatures::family);
  for (const auto* name : {"sm_35", "sm_75", "sm_80", "sm_90", "sm_90a", "sm_100f", "sm_103a", "sm_110f",
                           "sm_120", "sm_121f", "compute_80", "compute_90a", "compute_120f"}) {
    CHECK(t(name).name() == name);
  }
}

TEST_CASE("misspelt or impossible targets are refused with the nearest valid name") {
  CHECK(parse_gpu_target("sm_8O").error().message == "unknown GPU target 'sm_8O' (did you mean sm_80?)");
  CHECK(parse_gpu_target("sm90").error().message == "unknown GPU target 'sm90' (did you mean sm_90?)");
  CHECK(parse_gpu_target("sm_90f").error().message ==
        "unknown GPU target 'sm_90f': family (f) targets exist only for compute capability 10.0 and newer "
        "(did you mean sm_90a?)");
  CHECK(parse_gpu_target("sm_86f").error().message ==
        "unknown GPU target 'sm_86f': family (f) targets exist only for compute capability 10.0 and newer "
        "(did you mean sm_86?)");
  CHECK(parse_gpu_target("compute_80a").error().message ==
        "unknown GPU target 'compute_80a': arch-specific (a) targets exist only for compute capability 9.0 and "
        "newer (did you mean compute_80?)");
  CHECK(parse_gpu_target("sm_130").error().message == "unknown GPU target 'sm_130' (did you mean sm_120?)");
  CHECK(parse_gpu_target("banana").error().message == "unknown GPU target 'banana'");
}

TEST_CASE("targets sort by capability, then features, SASS before PTX") {
  std::vector<GpuTarget> targets{t("sm_90a"), t("compute_90"), t("sm_120"), t("sm_80"), t("sm_90")};
  std::ranges::sort(targets);
  CHECK(join_target_names(targets) == "sm_80,sm_90,compute_90,sm_90a,sm_120");
}

TEST_CASE("which toolkit compiles which target") {
  CHECK(toolkit_error("11.8", "sm_90").empty());
  CHECK(toolkit_error("11.7", "sm_90") == "sm_90 needs CUDA 11.8 or newer");
  CHECK(toolkit_error("11.8", "sm_90a") == "sm_90a needs CUDA 12.0 or newer");
  CHECK(toolkit_error("12.6", "sm_100") == "sm_100 needs CUDA 12.8 or newer");
  CHECK(toolkit_error("12.6", "sm_120") == "sm_120 needs CUDA 12.8 or newer");
  CHECK(toolkit_error("12.8", "sm_100").empty());
  CHECK(toolkit_error("12.8", "sm_103") == "sm_103 needs CUDA 12.9 or newer");
  CHECK(toolkit_error("12.8", "sm_121") == "sm_121 needs CUDA 12.9 or newer");
  CHECK(toolkit_error("12.8", "sm_100f") == "sm_100f needs CUDA 12.9 or newer");
  CHECK(toolkit_error("12.8", "compute_120f") == "compute_120f needs CUDA 12.9 or newer");
  CHECK(toolkit_error("12.9", "sm_100f").empty());
  CHECK(toolkit_error("12.9", "sm_110") == "sm_110 needs CUDA 13.0 or newer");
  CHECK(toolkit_error("13.0", "sm_107f") == "sm_107f needs CUDA 13.4 or newer");
  CHECK(toolkit_error("13.3", "sm_107") == "sm_107 needs CUDA 13.4 or newer");
  CHECK(toolkit_error("13.3", "compute_107a") == "compute_107a needs CUDA 13.4 or newer");
  CHECK(toolkit_error("13.4", "sm_107").empty());
  CHECK(toolkit_error("13.4", "compute_107f").empty());
  CHECK(toolkit_error("12.9", "sm_88") == "sm_88 needs CUDA 13.0 or newer");
  CHECK(toolkit_error("13.4", "sm_88").empty());
  CHECK(toolkit_error("13.4", "sm_121a").empty());
  CHECK(toolkit_error("13.4", "sm_110f").empty());
  CHECK(toolkit_error("13.4", "sm_72") == "CUDA 13.0 dropped sm_72; the last toolkit for it is CUDA 12.9");
  CHECK(toolkit_error("13.0", "sm_70") == "CUDA 13.0 dropped sm_70; the last toolkit for it is CUDA 12.9");
  CHECK(toolkit_error("13.0", "sm_50") == "CUDA 13.0 dropped sm_50; the last toolkit for it is CUDA 12.9");
  CHECK(toolkit_error("13.0", "sm_72") == "CUDA 13.0 dropped sm_72; the last toolkit for it is CUDA 12.9");
  CHECK(toolkit_error("12.9", "sm_72").empty());
  CHECK(toolkit_error("13.0", "sm_75").empty());
  CHECK(toolkit_error("12.0", "sm_37") == "CUDA 12.0 dropped sm_37; the last toolkit for it is CUDA 11.8");
  CHECK(toolkit_error("13.0", "sm_101") == "CUDA 13.0 renamed sm_101 to sm_110");
  CHECK(toolkit_error("13.0", "compute_101f") == "CUDA 13.0 renamed compute_101f to compute_110f");
}

TEST_CASE("every target nvcc 13.0 accepts is known to compile with 13.0, and nothing else") {
  const std::vector<std::string> nvcc13{"75", "80", "86", "87", "88", "89", "90", "90a", "100", "100a", "100f",
                                        "103", "103a", "103f", "110", "110a", "110f", "120", "120a", "120f",
                                        "121", "121a", "121f"};
  std::size_t supported = 0;
  for (const auto& name : gpu_target_names()) {
    if (name.starts_with("sm_") && check_toolkit_supports({13, 0}, t(name))) {
      ++supported;
      CHECK(std::ranges::find(nvcc13, name.substr(3)) != nvcc13.end());
    }
  }
  CHECK(supported == nvcc13.size());
}

TEST_CASE("CUDA 13.4 builds what 13.0 does plus Rubin, and nothing below 7.5") {
  std::size_t supported = 0;
  for (const auto& name : gpu_target_names()) {
    const auto target = t(name);
    if (name.starts_with("sm_") && check_toolkit_supports({13, 4}, target)) {
      ++supported;
      CHECK(target.capability >= ComputeCapability{7, 5});
      CHECK((check_toolkit_supports({13, 0}, target) || target.capability == ComputeCapability{10, 7}));
    }
  }
  CHECK(supported == 23 + 3);  // nvcc 13.0's list, then sm_107, sm_107a, sm_107f
}

TEST_CASE("a family target runs on its major's devices of an equal or higher minor") {
  // Every CC a current family has (10.1 is Thor's CUDA 12.8/12.9 number, 11.0 since).
  const std::vector<ComputeCapability> devices{{10, 0}, {10, 3}, {10, 7}, {11, 0}, {12, 0}, {12, 1}};
  for (const auto& family : devices) {
    std::vector<ComputeCapability> expected;
    std::ranges::copy_if(devices, std::back_inserter(expected), [&](ComputeCapability cc) {
      return cc.major == family.major && cc.minor >= family.minor;
    });
    const auto members = family_members(family);
    CAPTURE(family.str());
    CHECK(std::vector(members.begin(), members.end()) == expected);
  }
  CHECK(family_members({10, 1}).size() == 1);
  CHECK(serve(t("sm_103f"), {10, 7}).kind == ServeKind::family);
  CHECK_FALSE(serve(t("sm_107f"), {10, 3}).serves());
  CHECK_FALSE(serve(t("sm_107a"), {10, 0}).serves());
  CHECK(serve(t("sm_107"), {10, 7}).kind == ServeKind::sass_same);
}

TEST_CASE("serving follows section 5 rule 3") {
  const auto cc = [](int major, int minor) { return ComputeCapability{major, minor}; };
  CHECK(serve(t("sm_80"), cc(8, 0)).kind == ServeKind::sass_same);
  CHECK(serve(t("sm_80"), cc(8, 6)) == Serving{ServeKind::sass_lower_minor, 6});
  CHECK(serve(t("sm_86"), cc(8, 9)) == Serving{ServeKind::sass_lower_minor, 3});
  CHECK_FALSE(serve(t("sm_86"), cc(8, 0)).serves());
  CHECK_FALSE(serve(t("sm_80"), cc(9, 0)).serves());
  CHECK_FALSE(serve(t("sm_100"), cc(11, 0)).serves());
  CHECK(serve(t("sm_100"), cc(10, 3)).kind == ServeKind::sass_lower_minor);
  CHECK(serve(t("sm_90a"), cc(9, 0)).kind == ServeKind::arch_specific);
  CHECK_FALSE(serve(t("sm_90a"), cc(10, 0)).serves());
  CHECK_FALSE(serve(t("sm_100a"), cc(10, 3)).serves());
  CHECK(serve(t("sm_100f"), cc(10, 0)).kind == ServeKind::family);
  CHECK(serve(t("sm_100f"), cc(10, 3)).kind == ServeKind::family);
  CHECK(serve(t("sm_100f"), cc(10, 7)).kind == ServeKind::family);
  CHECK_FALSE(serve(t("sm_100f"), cc(11, 0)).serves());
  CHECK_FALSE(serve(t("sm_103f"), cc(10, 0)).serves());
  CHECK(serve(t("sm_120f"), cc(12, 1)).kind == ServeKind::family);
  CHECK_FALSE(serve(t("sm_121f"), cc(12, 0)).serves());
  CHECK(serve(t("compute_80"), cc(12, 0)).kind == ServeKind::ptx_jit);
  CHECK_FALSE(serve(t("compute_80"), cc(7, 5)).serves());
  CHECK(serve(t("compute_90a"), cc(9, 0)).kind == ServeKind::ptx_jit);
  CHECK_FALSE(serve(t("compute_90a"), cc(10, 0)).serves());
  CHECK(serve(t("compute_100f"), cc(10, 3)).kind == ServeKind::ptx_jit);
  CHECK_FALSE(serve(t("compute_100f"), cc(12, 0)).serves());
  CHECK(serve(t("sm_80"), cc(8, 0)).by_sass());
  CHECK_FALSE(serve(t("compute_80"), cc(8, 0)).by_sass());
}

TEST_CASE("ranking: arch-specific > family > same SASS > closer lower minor > PTX JIT > nothing") {
  CHECK(Serving{ServeKind::arch_specific} > Serving{ServeKind::family});
  CHECK(Serving{ServeKind::family} > Serving{ServeKind::sass_same});
  CHECK(Serving{ServeKind::sass_same} > Serving{ServeKind::sass_lower_minor, 1});
  CHECK(Serving{ServeKind::sass_lower_minor, 1} > Serving{ServeKind::sass_lower_minor, 6});
  CHECK(Serving{ServeKind::sass_lower_minor, 9} > Serving{ServeKind::ptx_jit});
  CHECK(Serving{ServeKind::ptx_jit} > Serving{});
  const std::vector targets{t("sm_80"), t("sm_86"), t("sm_90"), t("sm_90a"), t("compute_90")};
  CHECK(best_serving(targets, {8, 9}) == Serving{ServeKind::sass_lower_minor, 3});
  CHECK(best_serving(targets, {9, 0}).kind == ServeKind::arch_specific);
  CHECK(best_serving(targets, {12, 0}).kind == ServeKind::ptx_jit);
  CHECK(best_serving(targets, {7, 5}).kind == ServeKind::none);
}

TEST_CASE("families and serving names for explanations") {
  CHECK(family_members({10, 0}).size() == 3);
  CHECK(family_members({10, 3}).front() == ComputeCapability{10, 3});
  CHECK(family_members({12, 0}).back() == ComputeCapability{12, 1});
  CHECK(family_members({9, 0}).empty());
  CHECK(serve_kind_name(ServeKind::arch_specific) == "arch-specific SASS");
  CHECK(serve_kind_name(ServeKind::ptx_jit) == "PTX JIT");
  CHECK(serve_kind_name(ServeKind::none) == "no code");
}

TEST_CASE("served capability ranges") {
  const auto sm80 = served_capabilities(t("sm_80"));
  REQUIRE(sm80.size() == 1);
  CHECK(sm80[0].min == ComputeCapability{8, 0});
  CHECK(sm80[0].max_exclusive == ComputeCapability{9, 0});
  CHECK_FALSE(served_capabilities(t("compute_90"))[0].max_exclusive.has_value());
  CHECK(served_capabilities(t("sm_100f")).size() == 3);
  CHECK(served_capabilities(t("sm_90a"))[0].max_exclusive == ComputeCapability{9, 1});
}

TEST_CASE("nvcc and CMake spellings embed exactly the listed images") {
  const std::vector targets{t("sm_80"), t("sm_90a"), t("sm_100f"), t("compute_90")};
  CHECK(nvcc_gencode_flags(targets) ==
        "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a "
        "-gencode arch=compute_100f,code=sm_100f -gencode arch=compute_90,code=compute_90");
  CHECK(cmake_cuda_architectures(targets) == "80-real;90a-real;100f-real;90-virtual");
  CHECK(nvcc_gencode_flags({}).empty());
}

TEST_CASE("compute capabilities parse from M.m") {
  CHECK(parse_compute_capability("12.1") == ComputeCapability{12, 1});
  CHECK(parse_compute_capability("9.0")->number() == 90);
  CHECK_FALSE(parse_compute_capability("9").has_value());
  CHECK_FALSE(parse_compute_capability("9.10").has_value());
}
