// --gpus and NVIDIA_VISIBLE_DEVICES.

#include <doctest/doctest.h>

#include "test_select_support.hpp"

using namespace select_test;
using select::GpuChoice;

TEST_CASE("--gpus spellings") {
  CHECK(select::parse_gpu_selection("all", "--gpus")->choice == GpuChoice::all);
  CHECK(select::parse_gpu_selection("nvidia.com/gpu=all", "--gpus")->choice == GpuChoice::all);
  CHECK(select::parse_gpu_selection("none", "--gpus")->choice == GpuChoice::none);
  CHECK(select::parse_gpu_selection("void", "--gpus")->choice == GpuChoice::none);
  CHECK(select::parse_gpu_selection("", "--gpus")->choice == GpuChoice::none);
  const auto listed = select::parse_gpu_selection("0, GPU-abc,nvidia.com/gpu=2,1:0", "--gpus");
  REQUIRE(listed);
  CHECK(listed->choice == GpuChoice::listed);
  CHECK(listed->devices == std::vector<std::string>{"0", "GPU-abc", "2", "1:0"});
  CHECK(select::parse_gpu_selection("0,,1", "--gpus").error().message ==
        "--gpus: empty GPU name in '0,,1' (expected all, none, or indexes/UUIDs such as 0,1)");
  const auto mig = select::parse_gpu_selection("MIG-1234", "NVIDIA_VISIBLE_DEVICES");
  CHECK(mig.error().message ==
        "NVIDIA_VISIBLE_DEVICES: MIG device MIG-1234 cannot be mapped to its GPU; name the GPU or <gpu>:<mig> instead");
  CHECK(mig.error().exit_code == ExitCode::usage);
}

TEST_CASE("the default is NVIDIA_VISIBLE_DEVICES when set, else all; --gpus wins") {
  CHECK(select::choose_gpu_selection(std::nullopt, std::nullopt)->choice == GpuChoice::all);
  const auto env = select::choose_gpu_selection(std::nullopt, std::string("1"));
  CHECK(env->choice == GpuChoice::listed);
  CHECK(env->origin == "NVIDIA_VISIBLE_DEVICES");
  CHECK(select::choose_gpu_selection(std::nullopt, std::string("void"))->choice == GpuChoice::none);
  CHECK(select::choose_gpu_selection(std::string("all"), std::string("void"))->choice == GpuChoice::all);
}

TEST_CASE("considered GPUs: in host order, each once, unknown names a usage error listing the host's GPUs") {
  const auto host = with_gpus(cpu_host("x86-64-v3"), "580.65.06", "13.0", {"8.0", "9.0", "9.0"});
  const auto picked = select::considered_gpus(*select::parse_gpu_selection("2,0,gpu-00000002,1:3", "--gpus"), host);
  REQUIRE(picked);
  REQUIRE(picked->size() == 3);
  CHECK(picked->at(0).index == 0);
  CHECK(picked->at(1).index == 1);
  CHECK(picked->at(2).index == 2);
  const auto unknown = select::considered_gpus(*select::parse_gpu_selection("3", "--gpus"), host);
  CHECK(unknown.error().message == "--gpus names GPU 3, but this host has 0: GPU 8.0 GPU-00000000, "
                                   "1: GPU 9.0 GPU-00000001, 2: GPU 9.0 GPU-00000002");
  CHECK(unknown.error().exit_code == ExitCode::usage);
  CHECK(select::considered_gpus(*select::parse_gpu_selection("0", "--gpus"), cpu_host("x86-64-v3")).error().message ==
        "--gpus names GPU 0, but this host has no NVIDIA GPU");
  CHECK(select::considered_gpus(*select::parse_gpu_selection("none", "--gpus"), host)->empty());
}
