// select --explain: what the ranks mean, and for each compatible variant the first ranking key
// (docs/selection.md#ranking) on which it loses to the chosen one.

#include <doctest/doctest.h>

#include "hwimg/select/rank_explanation.hpp"
#include "hwimg/select/report.hpp"
#include "test_select_support.hpp"

using namespace select_test;

namespace {

// Why `name` ranks below the chosen variant of `selection`.
std::string reason_of(const select::Selection& selection, const std::string& name) {
  REQUIRE(selection.chosen_verdict() != nullptr);
  return select::rank_reason(verdict_of(selection, name), *selection.chosen_verdict(), selection.host);
}

}  // namespace

TEST_CASE("rank reasons: GPU use, then the GPU code's quality on the worst-served GPU") {
  const auto host = with_gpus(cpu_host("x86-64-v4"), "580.65.06", "13.0", {"9.0"});
  const auto selection = run({cpu_variant("x86-64-v4"), gpu_variant("ptx", "12.8", "compute_80"),
                              gpu_variant("sass", "12.8", "sm_80,sm_90")},
                             host);
  CHECK(reason_of(selection, "cpu-x86-64-v4") == "ranks below sass: runs on the CPU only, where sass uses the GPU");
  CHECK(reason_of(selection, "ptx") ==
        "ranks below sass: its GPU code is compute_80 (PTX JIT) on 9.0, where sass has sm_90 (SASS) on 9.0");

  const auto mixed = with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {"9.0", "8.6"});
  const auto on_mixed = run({gpu_variant("sm80", "12.8", "sm_80,sm_90"), gpu_variant("sm86", "12.8", "sm_86,sm_90")},
                            mixed);
  CHECK(reason_of(on_mixed, "sm80") ==
        "ranks below sm86: its GPU code is sm_80 (SASS of a lower minor) on 8.6, where sm86 has sm_86 (SASS) on 8.6");
}

TEST_CASE("rank reasons: native CUDA, then the CPU level, a named target and the features used") {
  const auto driver_12_2 = with_gpus(cpu_host("x86-64-v3"), "535.104.05", "12.2", {"9.0"});
  CHECK(reason_of(run({gpu_variant("cuda12.4", "12.4", "sm_90", "x86-64-v3"),
                       gpu_variant("cuda12.2", "12.2", "sm_90", "x86-64-v1")},
                      driver_12_2),
                  "cuda12.4") ==
        "ranks below cuda12.2: CUDA 12.4 runs only through minor-version compatibility, where cuda12.2 runs natively");

  const auto* zen4 = hw::find_cpu_target("zen4");
  REQUIRE(zen4 != nullptr);
  const auto host = cpu_host("x86-64-v4", "AMD", std::vector<std::string>(zen4->features.begin(), zen4->features.end()));
  auto extra = cpu_variant("x86-64-v3");
  extra.descriptor.annotations["org.hwimg.variant"] = "v3-plus-vnni";
  extra.descriptor.annotations["org.hwimg.cpu.features"] = "avx512_vnni";
  const auto selection = run({cpu_variant("x86-64-v3"), cpu_variant("x86-64-v4"), extra, cpu_variant("x86-64-v4", "zen4")},
                             host);
  CHECK(reason_of(selection, "cpu-x86-64-v3") ==
        "ranks below cpu-zen4: x86-64-v3 is a lower CPU level than cpu-zen4's x86-64-v4");
  CHECK(reason_of(selection, "cpu-x86-64-v4") ==
        "ranks below cpu-zen4: x86-64-v4 is a generic level, where cpu-zen4 is built for zen4");

  const auto without_zen4 = run({cpu_variant("x86-64-v3"), extra}, host);
  CHECK(reason_of(without_zen4, "cpu-x86-64-v3").starts_with(
      "ranks below v3-plus-vnni: uses fewer of this CPU's features ("));
}

TEST_CASE("rank reasons: newer CUDA, then the index order") {
  const auto host = with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {"9.0"});
  const auto selection = run({gpu_variant("cuda12.8", "12.8", "sm_90"), gpu_variant("cuda13.0", "13.0", "sm_90"),
                              gpu_variant("cuda13.0-again", "13.0", "sm_90")},
                             host);
  CHECK(reason_of(selection, "cuda12.8") == "ranks below cuda13.0: CUDA 12.8 is older than cuda13.0's CUDA 13.0");
  CHECK(reason_of(selection, "cuda13.0-again") ==
        "ranks below cuda13.0: ties with cuda13.0 on every key; it comes later in the index");
}

TEST_CASE("--explain says what the ranks mean and why each compatible variant ranks where it does") {
  const auto* zen4 = hw::find_cpu_target("zen4");
  REQUIRE(zen4 != nullptr);
  const auto host = cpu_host("x86-64-v4", "AMD", std::vector<std::string>(zen4->features.begin(), zen4->features.end()));
  const auto selection = run({cpu_variant("x86-64-v4"), cpu_variant("x86-64-v4", "zen4"), cpu_variant("x86-64-v2")},
                             host);
  const auto text = select::render_explanation("oci:out:1.0", selection);
  const auto body = text.substr(text.find('\n') + 1);  // after the host line
  CHECK(body ==
        "image: oci:out:1.0 (3 variants)\n"
        "ranking: rank 1 is chosen; the other variants that run here follow, ordered by GPU use, then GPU code "
        "quality, native CUDA, a bundled driver, CPU level, a named CPU target, CPU features used, newer CUDA, index order "
        "(docs/selection.md#ranking)\n"
        "VARIANT        PLATFORM        RESULT    WHY\n"
        "cpu-x86-64-v4  linux/amd64/v4  rank 2    x86-64-v4\n"
        "                                         ranks below cpu-zen4: x86-64-v4 is a generic level, where cpu-zen4 "
        "is built for zen4\n"
        "cpu-zen4       linux/amd64/v4  chosen    zen4\n"
        "cpu-x86-64-v2  linux/amd64/v2  rank 3    x86-64-v2\n"
        "                                         ranks below cpu-zen4: x86-64-v2 is a lower CPU level than "
        "cpu-zen4's x86-64-v4\n");

  const auto none = run({cpu_variant("x86-64-v4")}, cpu_host("x86-64-v2"));
  CHECK(select::render_explanation("oci:out:1.0", none).find("ranking:") == std::string::npos);
}

TEST_CASE("rank reasons: a bundled driver over the host's, mounted") {
  auto bundled = gpu_variant("bundled", "12.2", "sm_90");
  bundled.descriptor.annotations["org.hwimg.driver.bundled"] = "535.104.05";
  const auto selection =
      run({gpu_variant("toolkit", "12.2", "sm_90"), bundled}, with_gpus(cpu_host("x86-64-v3"), "535.104.05", "12.2", {"9.0"}));
  CHECK(reason_of(selection, "toolkit") ==
        "ranks below bundled: uses the host's driver, mounted by NVIDIA's toolkit, where bundled bundles driver 535.104.05");
}
