// docs/selection.md#rule-4-cuda-driver: a GPU generation needs its own driver branch even where the
// toolkit major's minor-version floor is lower (docs/compatibility.md#gpu-driver-floors).

#include <doctest/doctest.h>

#include "test_select_support.hpp"

using namespace select_test;

namespace {

std::vector<std::string> reasons_for(const select::Candidate& candidate, const probe::HostFacts& host) {
  return run({candidate}, host).verdicts.front().reasons;
}

}  // namespace

TEST_CASE("rule 4: a GPU newer than the host's driver branch is rejected, saying what to do") {
  struct Case {
    const char* cuda;
    const char* targets;
    const char* driver;
    const char* host_cuda;
    const char* gpu;
    const char* second_gpu;            // nullptr: one GPU
    std::vector<std::string> reasons;  // empty = compatible
  };
  const Case cases[] = {
      // CUDA 12.8 SASS is minor-version compatible with any 12.x driver, but no R560 runs a B200.
      {"12.8", "sm_100", "560.35.03", "12.6", "10.0", nullptr,
       {"GPU 0 (compute capability 10.0, Blackwell) needs driver >= 570; host has 560.35.03: upgrade the driver"}},
      {"12.8", "sm_120", "535.104.05", "12.2", "12.0", nullptr,
       {"GPU 0 (compute capability 12.0, Blackwell) needs driver >= 570; host has 535.104.05: upgrade the driver"}},
      {"12.8", "sm_100", "570.26", "12.8", "10.0", nullptr, {}},
      {"12.9", "sm_100", "570.124.06", "12.8", "10.0", nullptr, {}},  // minor-version compatible, floor met
      // Rubin (10.7) is in the 100f family, but only R615 drivers run it.
      {"13.0", "sm_100f", "580.65.06", "13.0", "10.7", "10.7",
       {"GPUs 0, 1 (compute capability 10.7, Rubin) need driver >= 615; host has 580.65.06: upgrade the driver"}},
      {"13.0", "sm_100f", "615.71.09", "13.4", "10.7", nullptr, {}},
      // CUDA 11.x's floor is 450.80.02; Hopper came with R520.
      {"11.8", "sm_90", "470.82.01", "11.4", "9.0", nullptr,
       {"GPU 0 (compute capability 9.0, Hopper) needs driver >= 520; host has 470.82.01: upgrade the driver"}},
      {"11.8", "sm_80", "470.82.01", "11.4", "8.0", nullptr, {}},
      // Only the GPUs below their floor are named; other failed rules are listed too.
      {"13.0", "sm_90,sm_100", "560.35.03", "12.6", "9.0", "10.0",
       {"needs a driver for CUDA 13.0; host driver 560.35.03 supports CUDA 12.6",
        "GPU 1 (compute capability 10.0, Blackwell) needs driver >= 570; host has 560.35.03: upgrade the driver"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.cuda);
    CAPTURE(c.targets);
    CAPTURE(c.driver);
    const auto host = c.second_gpu == nullptr
                          ? with_gpus(cpu_host("x86-64-v2"), c.driver, c.host_cuda, {c.gpu})
                          : with_gpus(cpu_host("x86-64-v2"), c.driver, c.host_cuda, {c.gpu, c.second_gpu});
    CHECK(reasons_for(gpu_variant("v", c.cuda, c.targets), host) == c.reasons);
  }
}

TEST_CASE("rule 4: without a driver version the host's CUDA version tells the branch") {
  auto host = with_gpus(cpu_host("x86-64-v2"), "560.35.03", "12.6", {"10.0"});
  host.nvidia->driver_version.reset();
  CHECK(reasons_for(gpu_variant("v", "12.8", "sm_100"), host) ==
        std::vector<std::string>{"GPU 0 (compute capability 10.0, Blackwell) needs driver >= 570 (CUDA 12.8); host "
                                 "driver supports CUDA 12.6: upgrade the driver"});
  host.nvidia->cuda_driver_version = "12.8";
  CHECK(reasons_for(gpu_variant("v", "12.8", "sm_100"), host).empty());
}

TEST_CASE("rule 4: the floors apply to the GPUs the container gets and to CUDA variants only") {
  const auto host = with_gpus(cpu_host("x86-64-v2"), "560.35.03", "12.6", {"8.0", "10.0"});
  const std::vector candidates{gpu_variant("ampere", "12.6", "sm_80"), cpu_variant("x86-64-v2")};
  CHECK(verdict_of(run(candidates, host, "0"), "ampere").reasons.empty());
  const auto all = verdict_of(run(candidates, host, "all"), "ampere").reasons;
  CHECK(all.size() == 2);  // rule 3 too: no code for 10.0
  CHECK(all.back() ==
        "GPU 1 (compute capability 10.0, Blackwell) needs driver >= 570; host has 560.35.03: upgrade the driver");
  CHECK(chosen_name(run(candidates, host, "all")) == "cpu-x86-64-v2");
  CHECK(verdict_of(run(candidates, host, "all"), "cpu-x86-64-v2").reasons.empty());
}

TEST_CASE("rule 4: the GPUs below their floor are the verdict's GPU failures") {
  const auto host = with_gpus(cpu_host("x86-64-v2"), "560.35.03", "12.6", {"9.0", "10.0"});
  const auto verdict = run({gpu_variant("v", "12.8", "sm_90,sm_100")}, host).verdicts.front();
  REQUIRE(verdict.gpu_failures.size() == 1);
  CHECK(verdict.gpu_failures[0].gpu.index == 1);
  CHECK(verdict.gpu_failures[0].reason ==
        "GPU 1 (compute capability 10.0, Blackwell) needs driver >= 570; host has 560.35.03: upgrade the driver");
}
