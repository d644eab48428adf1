// Rule 3 on nodes with mixed GPUs: every reason and every `gpu_failures` entry names the GPU
// (index, name, UUID, compute capability) a variant cannot run on (docs/selection.md#select-output).

#include <memory>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "hwimg/image/memory_reader.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/select/report.hpp"
#include "test_select_support.hpp"

using namespace select_test;

namespace {

// A host on R580 with these GPUs, each given as {name, compute capability ("" = unknown)}.
probe::HostFacts named_gpus(std::initializer_list<std::pair<std::string, std::string>> gpus) {
  auto facts = with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {});
  int index = 0;
  for (const auto& [name, capability] : gpus) {
    probe::GpuFacts gpu;
    gpu.index = index;
    gpu.uuid = "GPU-" + std::to_string(index);
    gpu.name = name;
    if (!capability.empty()) {
      gpu.compute_capability = capability;
    }
    facts.nvidia->gpus.push_back(gpu);
    ++index;
  }
  return facts;
}

std::vector<int> failed_indexes(const select::Verdict& verdict) {
  std::vector<int> indexes;
  for (const auto& failure : verdict.gpu_failures) {
    indexes.push_back(failure.gpu.index);
  }
  return indexes;
}

}  // namespace

TEST_CASE("an A100 beside an H100: the sm_90a variant is rejected naming the A100") {
  const auto host = named_gpus({{"NVIDIA A100-SXM4-80GB", "8.0"}, {"NVIDIA H100 80GB HBM3", "9.0"}});
  const auto selection = run({gpu_variant("hopper", "13.0", "sm_90a"), gpu_variant("both", "13.0", "sm_80,sm_90")},
                             host);
  CHECK(chosen_name(selection) == "both");
  const auto& hopper = verdict_of(selection, "hopper");
  const auto reason = "GPU 0 (NVIDIA A100-SXM4-80GB): no code for compute capability 8.0 (has sm_90a)";
  CHECK(hopper.reasons == std::vector<std::string>{reason});
  REQUIRE(hopper.gpu_failures.size() == 1);
  const auto& failure = hopper.gpu_failures.front();
  CHECK(failure.gpu.index == 0);
  CHECK(failure.gpu.uuid == "GPU-0");
  CHECK(failure.gpu.name == "NVIDIA A100-SXM4-80GB");
  CHECK(failure.gpu.capability == hw::ComputeCapability{8, 0});
  CHECK(failure.reason == reason);
  CHECK(verdict_of(selection, "both").gpu_failures.empty());
}

TEST_CASE("GPUs of one capability share a reason; each is a failure of its own") {
  const auto host = named_gpus({{"NVIDIA A100-SXM4-80GB", "8.0"},
                                {"NVIDIA H100 80GB HBM3", "9.0"},
                                {"NVIDIA A100-SXM4-80GB", "8.0"},
                                {"NVIDIA L4", "8.9"},
                                {"NVIDIA GeForce RTX 4090", "8.9"}});
  const auto verdict = run({gpu_variant("hopper", "13.0", "sm_90")}, host).verdicts.front();
  CHECK(verdict.reasons ==
        std::vector<std::string>{
            "GPUs 0, 2 (NVIDIA A100-SXM4-80GB): no code for compute capability 8.0 (has sm_90)",
            "GPU 3 (NVIDIA L4), GPU 4 (NVIDIA GeForce RTX 4090): no code for compute capability 8.9 (has sm_90)"});
  CHECK(failed_indexes(verdict) == std::vector<int>{0, 2, 3, 4});
  CHECK(verdict.gpu_failures[1].reason == verdict.reasons[0]);
  CHECK(verdict.gpu_failures[2].reason == verdict.reasons[1]);
}

TEST_CASE("a GPU of unknown capability is named; --gpus leaves the others out") {
  const auto host = named_gpus({{"NVIDIA H100 80GB HBM3", "9.0"}, {"", ""}, {"NVIDIA A100-SXM4-80GB", "8.0"}});
  const std::vector candidates{gpu_variant("hopper", "13.0", "sm_90")};
  const auto all = run(candidates, host).verdicts.front();
  CHECK(all.reasons == std::vector<std::string>{
                           "cannot tell whether it runs on GPU 1: its compute capability is unknown",
                           "GPU 2 (NVIDIA A100-SXM4-80GB): no code for compute capability 8.0 (has sm_90)"});
  REQUIRE(all.gpu_failures.size() == 2);
  CHECK_FALSE(all.gpu_failures[0].gpu.capability.has_value());

  const auto chosen = run(candidates, host, "0,2").verdicts.front();
  CHECK(failed_indexes(chosen) == std::vector<int>{2});
  CHECK(run(candidates, host, "0").verdicts.front().compatible());
}

TEST_CASE("--format json: gpu_failures names each failed GPU beside the reasons") {
  const auto host = named_gpus({{"NVIDIA H100 80GB HBM3", "9.0"}, {"NVIDIA A100-SXM4-80GB", "8.0"}});
  select::ImageSource source;
  source.image.reader = std::make_unique<image::MemoryReader>("registry.example/app");
  source.image.root.media_type = std::string(oci::media_type::index);
  source.candidates = {gpu_variant("hopper", "13.0", "sm_90a"), gpu_variant("both", "13.0", "sm_80,sm_90")};
  const auto selection = select::select_variant(source.candidates, host, {}).value();
  const auto json = nlohmann::json::parse(select::render_json(source, selection));
  const auto& hopper = json["candidates"][0];
  CHECK(hopper["reasons"] == nlohmann::json::array(
                                 {"GPU 1 (NVIDIA A100-SXM4-80GB): no code for compute capability 8.0 (has sm_90a)"}));
  REQUIRE(hopper["gpu_failures"].size() == 1);
  CHECK(hopper["gpu_failures"][0]["gpu"] == nlohmann::json{{"index", 1},
                                                           {"uuid", "GPU-1"},
                                                           {"name", "NVIDIA A100-SXM4-80GB"},
                                                           {"compute_capability", "8.0"}});
  CHECK(hopper["gpu_failures"][0]["reason"] == hopper["reasons"][0]);
  CHECK(json["candidates"][1]["gpu_failures"] == nlohmann::json::array());
}
