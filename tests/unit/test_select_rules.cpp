// docs/selection.md#rules, one table per rule: which variant is compatible and the exact reasons.

#include <doctest/doctest.h>

#include "test_select_support.hpp"

using namespace select_test;

namespace {

struct GpuCase {
  const char* targets;
  const char* capability;
  bool compatible;
  hw::ServeKind kind;
};

std::string comma_space(std::string text) {
  for (std::size_t at = text.find(','); at != std::string::npos; at = text.find(',', at + 2)) {
    text.insert(at + 1, " ");
  }
  return text;
}

}  // namespace

TEST_CASE("rule 3: device code serves a compute capability as NVIDIA's rules say") {
  const GpuCase cases[] = {
      {"sm_80", "8.0", true, hw::ServeKind::sass_same},
      {"sm_80", "8.6", true, hw::ServeKind::sass_lower_minor},  // SASS runs forward within a major
      {"sm_80", "8.9", true, hw::ServeKind::sass_lower_minor},
      {"sm_86", "8.0", false, hw::ServeKind::none},             // ... never backward
      {"sm_80", "9.0", false, hw::ServeKind::none},             // ... never to the next major
      {"sm_100", "10.3", true, hw::ServeKind::sass_lower_minor},
      {"sm_100", "12.0", false, hw::ServeKind::none},
      {"sm_90a", "9.0", true, hw::ServeKind::arch_specific},
      {"sm_90a", "10.0", false, hw::ServeKind::none},           // `a` only on exactly its CC
      {"sm_100a", "10.3", false, hw::ServeKind::none},
      {"compute_90a", "9.0", true, hw::ServeKind::ptx_jit},
      {"compute_90a", "10.0", false, hw::ServeKind::none},
      {"sm_100f", "10.0", true, hw::ServeKind::family},         // `f` on its family
      {"sm_100f", "10.3", true, hw::ServeKind::family},
      {"sm_100f", "10.7", true, hw::ServeKind::family},
      {"sm_100f", "11.0", false, hw::ServeKind::none},
      {"sm_120f", "12.1", true, hw::ServeKind::family},
      {"sm_103f", "10.0", false, hw::ServeKind::none},
      {"compute_100f", "10.3", true, hw::ServeKind::ptx_jit},
      {"compute_100f", "12.0", false, hw::ServeKind::none},
      {"compute_80", "9.0", true, hw::ServeKind::ptx_jit},      // PTX JIT to any later CC
      {"compute_80", "12.0", true, hw::ServeKind::ptx_jit},
      {"compute_90", "8.9", false, hw::ServeKind::none},
      {"sm_80,compute_80", "9.0", true, hw::ServeKind::ptx_jit},
      {"sm_80,sm_90", "9.0", true, hw::ServeKind::sass_same},
  };
  for (const auto& c : cases) {
    CAPTURE(c.targets);
    CAPTURE(c.capability);
    const auto host = with_gpus(cpu_host("x86-64-v3"), "615.71.09", "13.4", {c.capability});  // runs Rubin (10.7)
    const auto selection = run({gpu_variant("v", "12.8", c.targets)}, host);
    const auto& verdict = selection.verdicts.front();
    CHECK(verdict.compatible() == c.compatible);
    if (c.compatible) {
      CHECK(verdict.key.gpu_serving.kind == c.kind);
    } else {
      CHECK(verdict.reasons ==
            std::vector<std::string>{fmt::format("GPU 0 (GPU {}): no code for compute capability {} (has {})",
                                                 c.capability, c.capability, comma_space(c.targets))});
    }
  }
}

TEST_CASE("rule 3: mixed GPUs are judged on the worst-served one, every unserved capability named") {
  const auto host = with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {"8.0", "9.0", "7.0"});
  const auto selection = run({gpu_variant("both", "12.8", "sm_80,sm_90"), gpu_variant("old", "12.8", "sm_70,sm_80")},
                             host);
  CHECK(verdict_of(selection, "both").reasons ==
        std::vector<std::string>{"GPU 2 (GPU 7.0): no code for compute capability 7.0 (has sm_80, sm_90)"});
  CHECK(verdict_of(selection, "old").reasons ==
        std::vector<std::string>{"GPU 1 (GPU 9.0): no code for compute capability 9.0 (has sm_70, sm_80)"});

  const auto mixed = with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {"8.0", "9.0"});
  const auto ranked = run({gpu_variant("ptx-for-hopper", "12.8", "sm_80,compute_80"),
                           gpu_variant("sass-for-both", "12.8", "sm_80,sm_90")},
                          mixed);
  CHECK(chosen_name(ranked) == "sass-for-both");
  CHECK(verdict_of(ranked, "ptx-for-hopper").key.gpu_serving.kind == hw::ServeKind::ptx_jit);
}

TEST_CASE("rule 3: --gpus names the GPUs judged") {
  const auto host = with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {"7.5", "9.0"});
  const std::vector candidates{gpu_variant("hopper", "12.8", "sm_90"), cpu_variant("x86-64-v3")};
  CHECK(chosen_name(run(candidates, host, "all")) == "cpu-x86-64-v3");
  CHECK(verdict_of(run(candidates, host, "all"), "hopper").reasons ==
        std::vector<std::string>{"GPU 0 (GPU 7.5): no code for compute capability 7.5 (has sm_90)"});
  CHECK(chosen_name(run(candidates, host, "1")) == "hopper");
  CHECK(chosen_name(run(candidates, host, "GPU-00000001")) == "hopper");
  CHECK(chosen_name(run(candidates, host, "0")) == "cpu-x86-64-v3");

  const auto none = run(candidates, host, "none");
  CHECK(chosen_name(none) == "cpu-x86-64-v3");
  CHECK(verdict_of(none, "hopper").reasons ==
        std::vector<std::string>{"needs a GPU; the container gets none (--gpus none)"});
}

TEST_CASE("rule 3: a GPU-only index on a host without a GPU fits nowhere, with reasons") {
  const auto selection =
      run({gpu_variant("cuda12.8-sm90", "12.8", "sm_90"), gpu_variant("cuda12.8-sm80", "12.8", "sm_80")},
          cpu_host("x86-64-v4"));
  CHECK_FALSE(selection.chosen.has_value());
  for (const auto& verdict : selection.verdicts) {
    CHECK(verdict.reasons == std::vector<std::string>{"needs an NVIDIA GPU; host has no NVIDIA driver"});
  }
  probe::HostFacts driver_only = cpu_host("x86-64-v3");
  driver_only.nvidia = probe::NvidiaFacts{"580.65.06", "13.0", "nvml", {}};
  CHECK(run({gpu_variant("g", "12.8", "sm_90")}, driver_only).verdicts.front().reasons ==
        std::vector<std::string>{"needs a GPU; host has none"});
}

TEST_CASE("rule 4: native CUDA, minor-version compatibility without PTX JIT, and the floors") {
  struct Case {
    const char* cuda;
    const char* targets;
    const char* driver;
    const char* host_cuda;
    const char* capability;
    const char* reason;  // "" = compatible
    bool native;
  };
  const Case cases[] = {
      {"12.8", "sm_90", "580.65.06", "13.0", "9.0", "", true},
      {"12.8", "compute_90", "580.65.06", "13.0", "9.0", "", true},  // PTX JIT allowed natively
      {"12.8", "sm_90", "535.104.05", "12.2", "9.0", "", false},     // minor-version compatible
      {"12.8", "sm_80", "535.104.05", "12.2", "8.6", "", false},     // SASS of a lower minor is SASS
      {"12.8", "compute_90", "535.104.05", "12.2", "9.0",
       "needs a driver for CUDA 12.8 to JIT its PTX for compute capability 9.0 (minor-version compatibility runs "
       "SASS only); host driver 535.104.05 supports CUDA 12.2",
       false},
      {"12.8", "sm_80,compute_80", "535.104.05", "12.2", "9.0",
       "needs a driver for CUDA 12.8 to JIT its PTX for compute capability 9.0 (minor-version compatibility runs "
       "SASS only); host driver 535.104.05 supports CUDA 12.2",
       false},
      {"13.0", "sm_90", "535.104.05", "12.2", "9.0",
       "needs a driver for CUDA 13.0; host driver 535.104.05 supports CUDA 12.2", true},
      {"12.2", "sm_90", "520.61.05", "11.8", "9.0",
       "needs a driver for CUDA 12.2; host driver 520.61.05 supports CUDA 11.8", true},
      {"11.8", "sm_80", "470.57.02", "11.4", "8.0", "", false},
      {"11.8", "sm_80", "450.51.06", "11.0", "8.0",  // below the 11.x floor 450.80.02
       "needs a driver for CUDA 11.8; host driver 450.51.06 supports CUDA 11.0", true},
      {"11.2", "sm_80", "450.80.02", "11.0", "8.0", "", false},
      {"12.4", "sm_90", "525.60.11", "12.0", "9.0", "", false},      // any build of branch 525
      {"13.1", "sm_100", "580.65.06", "13.0", "10.0", "", false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.cuda);
    CAPTURE(c.targets);
    CAPTURE(c.driver);
    const auto host = with_gpus(cpu_host("x86-64-v2"), c.driver, c.host_cuda, {c.capability});
    const auto verdict = run({gpu_variant("v", c.cuda, c.targets)}, host).verdicts.front();
    if (std::string(c.reason).empty()) {
      CHECK(verdict.reasons.empty());
      CHECK(verdict.key.native_cuda == c.native);
    } else {
      CHECK(verdict.reasons == std::vector<std::string>{c.reason});
    }
  }
}

TEST_CASE("rule 4: the CUDA version of a driver is derived when the facts lack it") {
  auto host = with_gpus(cpu_host("x86-64-v2"), "535.104.05", "12.2", {"9.0"});
  host.nvidia->cuda_driver_version.reset();
  CHECK(run({gpu_variant("v", "13.0", "sm_90")}, host).verdicts.front().reasons ==
        std::vector<std::string>{"needs a driver for CUDA 13.0; host driver 535.104.05 supports CUDA 12.2"});
}

TEST_CASE("rule 5: a bundled driver must equal the host's exactly") {
  auto bundled = gpu_variant("bundled", "12.2", "sm_90");
  bundled.descriptor.annotations["org.hwimg.driver.bundled"] = "535.104.05";
  CHECK(run({bundled}, with_gpus(cpu_host("x86-64-v2"), "535.104.05", "12.2", {"9.0"})).chosen.has_value());
  CHECK(run({bundled}, with_gpus(cpu_host("x86-64-v2"), "535.104.12", "12.2", {"9.0"})).verdicts.front().reasons ==
        std::vector<std::string>{"bundles driver 535.104.05; host kernel driver is 535.104.12 (they must be equal)"});
  CHECK(run({bundled}, with_gpus(cpu_host("x86-64-v2"), "550.54.14", "12.4", {"9.0"})).verdicts.front().reasons ==
        std::vector<std::string>{"bundles driver 535.104.05; host kernel driver is 550.54.14 (they must be equal)"});
}

TEST_CASE("ranking key 4: where a bundled-driver variant and a toolkit-mounted one both run, the bundled one wins") {
  auto toolkit = gpu_variant("toolkit", "12.2", "sm_90");
  auto bundled = gpu_variant("bundled", "12.2", "sm_90");
  bundled.descriptor.annotations["org.hwimg.driver.bundled"] = "535.104.05";
  // The toolkit variant comes first in the index: position alone would choose it.
  const auto matching = run({toolkit, bundled}, with_gpus(cpu_host("x86-64-v2"), "535.104.05", "12.2", {"9.0"}));
  CHECK(chosen_name(matching) == "bundled");
  CHECK(verdict_of(matching, "toolkit").rank == 2);
  CHECK(verdict_of(matching, "bundled").summary == "SASS sm_90, CUDA 12.2 native, bundles driver 535.104.05, x86-64-v1");
  // Elsewhere the toolkit variant runs and the bundled one is refused with the reason.
  const auto other = run({toolkit, bundled}, with_gpus(cpu_host("x86-64-v2"), "550.54.14", "12.4", {"9.0"}));
  CHECK(chosen_name(other) == "toolkit");
  CHECK(verdict_of(other, "bundled").reasons ==
        std::vector<std::string>{"bundles driver 535.104.05; host kernel driver is 550.54.14 (they must be equal)"});
  // Better GPU code still comes first: key 2 is before key 4.
  auto better = gpu_variant("better", "12.2", "sm_90a");
  const auto code = run({bundled, better}, with_gpus(cpu_host("x86-64-v2"), "535.104.05", "12.2", {"9.0"}));
  CHECK(chosen_name(code) == "better");
}

TEST_CASE("rule 2: psABI levels, with the missing features named") {
  const std::vector candidates{cpu_variant("x86-64-v4"), cpu_variant("x86-64-v3"), cpu_variant("x86-64-v2"),
                               cpu_variant("x86-64-v1")};
  const auto v3 = run(candidates, cpu_host("x86-64-v3"));
  CHECK(chosen_name(v3) == "cpu-x86-64-v3");
  CHECK(verdict_of(v3, "cpu-x86-64-v4").reasons ==
        std::vector<std::string>{"needs AVX-512 (avx512bw, avx512cd, avx512dq, avx512f, avx512vl); host has x86-64-v3"});
  const auto v1 = run(candidates, cpu_host("x86-64-v1"));
  CHECK(chosen_name(v1) == "cpu-x86-64-v1");
  CHECK(verdict_of(v1, "cpu-x86-64-v3").reasons.front().starts_with("needs SSE4.2 and AVX2 ("));
  CHECK(verdict_of(v1, "cpu-x86-64-v3").reasons.front().ends_with("; host has x86-64-v1"));
}

TEST_CASE("rule 2: a CPU whose OS disabled AVX-512 gets the AVX2 variant") {
  // The probe lists only OS-enabled features: AVX-512 without its XCR0 bits is absent.
  auto host = cpu_host("x86-64-v3", "AMD", {"avx512_bf16"});
  host.cpu.model_name = "AMD EPYC 9454";
  const auto selection =
      run({cpu_variant("x86-64-v4", "zen4"), cpu_variant("x86-64-v4"), cpu_variant("x86-64-v3")}, host);
  CHECK(chosen_name(selection) == "cpu-x86-64-v3");
  const auto& zen4 = verdict_of(selection, "cpu-zen4").reasons;
  REQUIRE(zen4.size() == 2);
  CHECK(zen4[0] == "needs AVX-512 (avx512bw, avx512cd, avx512dq, avx512f, avx512vl); host has x86-64-v3");
  CHECK(zen4[1].starts_with("zen4 needs "));
  CHECK(zen4[1].find("avx512f") != std::string::npos);
}

TEST_CASE("rule 2: named targets are vendor-locked and need their instruction-set features only") {
  const auto* zen4 = hw::find_cpu_target("zen4");
  REQUIRE(zen4 != nullptr);
  std::vector<std::string> features(zen4->features.begin(), zen4->features.end());
  // A cloud VM hides pku and flush_l1d: still a zen4.
  std::erase(features, "pku");
  std::erase(features, "flush_l1d");
  auto amd = cpu_host("x86-64-v4", "AMD", features);
  auto intel = cpu_host("x86-64-v4", "Intel", features);
  const std::vector candidates{cpu_variant("x86-64-v4", "zen4"), cpu_variant("x86-64-v4")};
  CHECK(chosen_name(run(candidates, amd)) == "cpu-zen4");
  const auto on_intel = run(candidates, intel);
  CHECK(chosen_name(on_intel) == "cpu-x86-64-v4");
  CHECK(verdict_of(on_intel, "cpu-zen4").reasons == std::vector<std::string>{"zen4 needs an AMD CPU; host CPU is Intel"});
}

TEST_CASE("rule 2: listed CPU features must all be present") {
  auto with_features = cpu_variant("x86-64-v3");
  with_features.descriptor.annotations["org.hwimg.cpu.features"] = "avx_vnni,sha_ni";
  const auto verdict = run({with_features}, cpu_host("x86-64-v3", "Intel", {"sha_ni"})).verdicts.front();
  CHECK(verdict.reasons == std::vector<std::string>{"needs CPU features avx_vnni; host (x86-64-v3) does not have them"});
  CHECK(run({with_features}, cpu_host("x86-64-v3", "Intel", {"sha_ni", "avx_vnni"})).chosen.has_value());
}

TEST_CASE("rule 1: an arm64 host runs only arm64 variants") {
  const std::vector candidates{cpu_variant("x86-64-v3"),
                               variant("cpu-armv8.2a", {{"cpu.level", "aarch64"}}, {"linux", "arm64", ""}),
                               platform_variant({"linux", "arm64", "v9"})};
  const auto selection = run(candidates, arm64_host());
  CHECK(chosen_name(selection) == "cpu-armv8.2a");
  CHECK(verdict_of(selection, "cpu-x86-64-v3").reasons ==
        std::vector<std::string>{"built for linux/amd64/v3; host is linux/arm64"});
  CHECK(verdict_of(selection, "linux/arm64/v9").reasons ==
        std::vector<std::string>{"built for linux/arm64/v9; like containerd, hwimg runs only arm64/v8 images on "
                                 "arm64 hosts"});
}

TEST_CASE("every failed rule is listed, not just the first") {
  auto host = with_gpus(cpu_host("x86-64-v2", "Intel"), "535.104.05", "12.2", {"7.0"});
  auto candidate = gpu_variant("cuda13.0-sm90-zen4", "13.0", "sm_90", "x86-64-v4");
  candidate.descriptor.annotations["org.hwimg.cpu.target"] = "zen4";
  const auto reasons = run({candidate}, host).verdicts.front().reasons;
  REQUIRE(reasons.size() == 5);
  CHECK(reasons[0].starts_with("needs AVX2 and AVX-512 ("));
  CHECK(reasons[1] == "zen4 needs an AMD CPU; host CPU is Intel");
  CHECK(reasons[2].starts_with("zen4 needs "));
  CHECK(reasons[3] == "GPU 0 (GPU 7.0): no code for compute capability 7.0 (has sm_90)");
  CHECK(reasons[4] == "needs a driver for CUDA 13.0; host driver 535.104.05 supports CUDA 12.2");
}

TEST_CASE("unreadable annotations reject the variant and say which") {
  auto candidate = gpu_variant("typo", "12.8", "sm_8O");
  candidate.descriptor.annotations["org.hwimg.cuda.version"] = "12";
  const auto reasons =
      run({candidate}, with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {"8.0"})).verdicts.front().reasons;
  REQUIRE(reasons.size() >= 2);
  CHECK(reasons[0] == "annotation org.hwimg.cuda.version: '12' is not a CUDA version such as 12.8");
  CHECK(reasons[1] == "annotation org.hwimg.gpu.targets: unknown GPU target 'sm_8O' (did you mean sm_80?)");
}
