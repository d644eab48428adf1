// Images made by others: NVIDIA_REQUIRE_* in their config, evaluated as libnvidia-container does.

#include <doctest/doctest.h>

#include "test_select_support.hpp"
#include "test_support.hpp"

using namespace select_test;
using hwimg::test::nvidia::require_cuda_11_8;
using hwimg::test::nvidia::require_cuda_12_6_3;

namespace {

select::Candidate cuda_image(const std::string& require, std::vector<std::string> more_env = {}) {
  more_env.push_back("NVIDIA_REQUIRE_CUDA=" + require);
  more_env.emplace_back("PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/bin");
  return platform_variant({"linux", "amd64", ""}, std::move(more_env));
}

std::vector<std::string> reasons_on(const select::Candidate& image, const probe::HostFacts& host,
                                    const std::string& gpus = "all") {
  return run({image}, host, gpus).verdicts.front().reasons;
}

}  // namespace

TEST_CASE("NVIDIA's 12.6.3 image: native hosts and the brand/branch forward-compatibility pairs") {
  const auto image = cuda_image(require_cuda_12_6_3());
  CHECK(reasons_on(image, with_gpus(cpu_host("x86-64-v3"), "560.35.03", "12.6", {"9.0"})).empty());
  CHECK(reasons_on(image, with_gpus(cpu_host("x86-64-v3"), "535.104.05", "12.2", {"9.0"}, "NVIDIA")).empty());
  CHECK(reasons_on(image, with_gpus(cpu_host("x86-64-v3"), "535.104.05", "12.2", {"8.9"}, "NVIDIA RTX")).empty());
  CHECK(reasons_on(image, with_gpus(cpu_host("x86-64-v3"), "535.104.05", "12.2", {"8.9"}, "GeForce")) ==
        std::vector<std::string>{"NVIDIA_REQUIRE_CUDA: unsatisfied condition: cuda>=12.6; host driver 535.104.05 "
                                 "supports CUDA 12.2"});
  CHECK(reasons_on(image, with_gpus(cpu_host("x86-64-v3"), "545.23.08", "12.3", {"9.0"})) ==
        std::vector<std::string>{"NVIDIA_REQUIRE_CUDA: unsatisfied condition: cuda>=12.6; host driver 545.23.08 "
                                 "supports CUDA 12.3"});
}

TEST_CASE("NVIDIA's 11.8 image: every visible GPU must satisfy it; --gpus narrows them") {
  const auto image = cuda_image(require_cuda_11_8);
  const auto host = with_gpus(cpu_host("x86-64-v3"), "470.57.02", "11.4", {"8.0"}, "GRID");
  CHECK(reasons_on(image, host) ==
        std::vector<std::string>{"NVIDIA_REQUIRE_CUDA: unsatisfied condition: cuda>=11.8; host driver 470.57.02 "
                                 "supports CUDA 11.4"});
  auto mixed = with_gpus(cpu_host("x86-64-v3"), "470.57.02", "11.4", {"8.0", "8.6"}, "Tesla");
  mixed.nvidia->gpus[1].brand = "GRID";
  CHECK_FALSE(reasons_on(image, mixed).empty());
  CHECK(reasons_on(image, mixed, "0").empty());
}

TEST_CASE("NVIDIA_REQUIRE_*: arch terms, several variables, the legacy CUDA_VERSION and NVIDIA_DISABLE_REQUIRE") {
  const auto host = with_gpus(cpu_host("x86-64-v3"), "535.104.05", "12.2", {"8.0"});
  CHECK(reasons_on(cuda_image("cuda>=12.0,arch>=9.0"), host) ==
        std::vector<std::string>{"NVIDIA_REQUIRE_CUDA: unsatisfied condition: cuda>=12.0,arch>=9.0; host driver "
                                 "535.104.05 supports CUDA 12.2"});
  CHECK(reasons_on(cuda_image("cuda>=12.0", {"NVIDIA_REQUIRE_DRIVER=driver>=550"}), host) ==
        std::vector<std::string>{"NVIDIA_REQUIRE_DRIVER: unsatisfied condition: driver>=550; host driver 535.104.05 "
                                 "supports CUDA 12.2"});
  CHECK(reasons_on(cuda_image("cuda>=12.0", {"NVIDIA_REQUIRE_JETPACK=csv-mounts=all"}), host).empty());
  CHECK(reasons_on(platform_variant({"linux", "amd64", ""}, {"CUDA_VERSION=12.4.1"}), host) ==
        std::vector<std::string>{"CUDA_VERSION: unsatisfied condition: cuda>=12.4; host driver 535.104.05 supports "
                                 "CUDA 12.2"});
  CHECK(reasons_on(cuda_image("cuda>=12.8", {"NVIDIA_DISABLE_REQUIRE=true"}), host).empty());
  CHECK(reasons_on(cuda_image("cuda>=12.8", {"NVIDIA_DISABLE_REQUIRE=1"}), host).empty());
  CHECK_FALSE(reasons_on(cuda_image("cuda>=12.8", {"NVIDIA_DISABLE_REQUIRE=yes"}), host).empty());
  CHECK(reasons_on(cuda_image("cuda==12.8"), host).front().starts_with("NVIDIA_REQUIRE_CUDA: "));
}

TEST_CASE("NVIDIA_REQUIRE_*: with --gpus none it is evaluated once without a device; without a driver not at all") {
  const auto image = cuda_image("cuda>=12.0,arch>=9.0");
  CHECK(reasons_on(image, with_gpus(cpu_host("x86-64-v3"), "535.104.05", "12.2", {"8.0"}), "none").empty());
  CHECK(reasons_on(cuda_image("cuda>=12.6"), with_gpus(cpu_host("x86-64-v3"), "535.104.05", "12.2", {"8.0"}),
                   "none") ==
        std::vector<std::string>{"NVIDIA_REQUIRE_CUDA: unsatisfied condition: cuda>=12.6; host driver 535.104.05 "
                                 "supports CUDA 12.2"});
  CHECK(reasons_on(image, cpu_host("x86-64-v3")).empty());
}

TEST_CASE("hwimg pairs in the config labels are used when the descriptor has none") {
  auto candidate = platform_variant({"linux", "amd64", "v3"});
  candidate.config->labels["org.hwimg.variant"] = "cuda12.8-sm90-x86-64-v3";
  candidate.config->labels["org.hwimg.cuda.version"] = "12.8";
  candidate.config->labels["org.hwimg.gpu.targets"] = "sm_90";
  candidate.config->labels["org.hwimg.cpu.level"] = "x86-64-v3";
  const auto selection = run({candidate}, cpu_host("x86-64-v3"));
  CHECK(selection.verdicts.front().requirements.name == "cuda12.8-sm90-x86-64-v3");
  CHECK(selection.verdicts.front().reasons ==
        std::vector<std::string>{"needs an NVIDIA GPU; host has no NVIDIA driver"});
}

TEST_CASE("entries nobody labelled that share a platform are named apart by their digests") {
  const auto old_cuda = cuda_image(require_cuda_11_8);
  const auto new_cuda = cuda_image(require_cuda_12_6_3(), {"CUDA_VERSION=12.6.3"});
  const auto selection = run(std::vector{old_cuda, new_cuda}, with_gpus(cpu_host("x86-64-v3"), "520.61.05", "11.8", {"8.0"}));
  REQUIRE(selection.verdicts.size() == 2);
  CHECK(selection.verdicts[0].requirements.name == "linux/amd64 (" + old_cuda.descriptor.digest.str().substr(0, 19) + ")");
  CHECK(selection.verdicts[1].requirements.name == "linux/amd64 (" + new_cuda.descriptor.digest.str().substr(0, 19) + ")");
  CHECK(chosen_name(selection) == selection.verdicts[0].requirements.name);
  // One such entry alone keeps the plain platform.
  CHECK(run(std::vector{old_cuda}, with_gpus(cpu_host("x86-64-v3"), "520.61.05", "11.8", {"8.0"})).verdicts[0].requirements.name ==
        "linux/amd64");
}
