// docs/selection.md#ranking: each key decides when the keys before it tie.

#include <algorithm>

#include <doctest/doctest.h>

#include "test_select_support.hpp"

using namespace select_test;

namespace {

std::vector<std::string> ranked_names(const select::Selection& selection) {
  std::vector<std::pair<std::size_t, std::string>> ranked;
  for (const auto& verdict : selection.verdicts) {
    if (verdict.rank) {
      ranked.emplace_back(*verdict.rank, verdict.requirements.name);
    }
  }
  std::ranges::sort(ranked);
  std::vector<std::string> names;
  for (auto& entry : ranked) {
    names.push_back(std::move(entry.second));
  }
  return names;
}

}  // namespace

TEST_CASE("key 1: GPU code over CPU-only when GPUs are considered") {
  const auto host = with_gpus(cpu_host("x86-64-v4"), "580.65.06", "13.0", {"9.0"});
  const std::vector candidates{cpu_variant("x86-64-v4"), gpu_variant("gpu-v1", "12.8", "compute_75")};
  CHECK(ranked_names(run(candidates, host)) == std::vector<std::string>{"gpu-v1", "cpu-x86-64-v4"});
  CHECK(ranked_names(run(candidates, host, "none")) == std::vector<std::string>{"cpu-x86-64-v4"});
}

TEST_CASE("key 2: arch-specific > family > same SASS > lower minor (closer first) > PTX JIT") {
  const auto hopper = with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {"9.0"});
  CHECK(ranked_names(run({gpu_variant("ptx", "12.8", "compute_80"), gpu_variant("sass", "12.8", "sm_90"),
                          gpu_variant("arch", "12.8", "sm_90a")},
                         hopper)) == std::vector<std::string>{"arch", "sass", "ptx"});
  const auto b300 = with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {"10.3"});
  CHECK(ranked_names(run({gpu_variant("lower", "12.9", "sm_100"), gpu_variant("family", "12.9", "sm_100f"),
                          gpu_variant("same", "12.9", "sm_103"), gpu_variant("exact", "12.9", "sm_103a")},
                         b300)) == std::vector<std::string>{"exact", "family", "same", "lower"});
  const auto ada = with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {"8.9"});
  CHECK(ranked_names(run({gpu_variant("sm80", "12.8", "sm_80"), gpu_variant("sm86", "12.8", "sm_86"),
                          gpu_variant("jit", "12.8", "compute_89")},
                         ada)) == std::vector<std::string>{"sm86", "sm80", "jit"});
}

TEST_CASE("key 3: native CUDA over minor-version compatibility") {
  const auto host = with_gpus(cpu_host("x86-64-v3"), "535.104.05", "12.2", {"9.0"});
  CHECK(ranked_names(run({gpu_variant("cuda12.4", "12.4", "sm_90", "x86-64-v3"),
                          gpu_variant("cuda12.2", "12.2", "sm_90", "x86-64-v1")},
                         host)) == std::vector<std::string>{"cuda12.2", "cuda12.4"});
}

TEST_CASE("key 4: higher CPU level, then a named target, then more required features") {
  const auto* zen4 = hw::find_cpu_target("zen4");
  REQUIRE(zen4 != nullptr);
  std::vector<std::string> features(zen4->features.begin(), zen4->features.end());
  const auto host = cpu_host("x86-64-v4", "AMD", features);
  auto extra = cpu_variant("x86-64-v4");
  extra.descriptor.annotations["org.hwimg.variant"] = "v4-plus-vnni";
  extra.descriptor.annotations["org.hwimg.cpu.features"] = "avx512_vnni";
  CHECK(ranked_names(run({cpu_variant("x86-64-v2"), cpu_variant("x86-64-v4"), extra, cpu_variant("x86-64-v3"),
                          cpu_variant("x86-64-v4", "zen4")},
                         host)) ==
        std::vector<std::string>{"cpu-zen4", "v4-plus-vnni", "cpu-x86-64-v4", "cpu-x86-64-v3", "cpu-x86-64-v2"});
}

TEST_CASE("key 5: newer CUDA; key 6: earlier in the index") {
  const auto host = with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {"9.0"});
  CHECK(ranked_names(run({gpu_variant("cuda12.8", "12.8", "sm_90"), gpu_variant("cuda13.0", "13.0", "sm_90"),
                          gpu_variant("cuda13.0-again", "13.0", "sm_90")},
                         host)) == std::vector<std::string>{"cuda13.0", "cuda13.0-again", "cuda12.8"});
}

TEST_CASE("platform-only indexes are ranked as containerd would: v4 > v3 > v2 > v1") {
  const std::vector candidates{platform_variant({"linux", "amd64", ""}), platform_variant({"linux", "amd64", "v2"}),
                               platform_variant({"linux", "amd64", "v3"}), platform_variant({"linux", "amd64", "v4"}),
                               platform_variant({"linux", "arm64", "v8"})};
  const auto v3 = run(candidates, cpu_host("x86-64-v3"));
  CHECK(ranked_names(v3) == std::vector<std::string>{"linux/amd64/v3", "linux/amd64/v2", "linux/amd64"});
  CHECK(verdict_of(v3, "linux/amd64/v4").reasons.front().starts_with("needs AVX-512 ("));
  CHECK(verdict_of(v3, "linux/arm64/v8").reasons ==
        std::vector<std::string>{"built for linux/arm64/v8; host is linux/amd64"});
  CHECK(chosen_name(run(candidates, arm64_host())) == "linux/arm64/v8");
  CHECK(chosen_name(run({platform_variant({"linux", "amd64", "v1"})}, cpu_host("x86-64-v1"))) == "linux/amd64/v1");
}
