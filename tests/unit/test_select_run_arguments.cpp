// `hwimg select --format docker-args|podman-args`: the GPU options of a bundled-driver, a
// toolkit-mounted and a CPU-only variant, for no, one and several GPUs (docs/running.md).

#include <doctest/doctest.h>

#include "hwimg/select/run_arguments.hpp"
#include "hwimg/util/strings.hpp"
#include "test_select_support.hpp"

using namespace select_test;
using select::Runtime;

namespace {

constexpr std::string_view image = "registry.example/app@sha256:abc";

select::Candidate bundled_variant() {
  auto bundled = gpu_variant("bundled", "12.2", "sm_90");
  bundled.descriptor.annotations["org.hwimg.driver.bundled"] = "535.104.05";
  return bundled;
}

probe::HostFacts host_with(std::initializer_list<std::string> capabilities) {
  return with_gpus(cpu_host("x86-64-v3"), "535.104.05", "12.2", capabilities);
}

// The printed line for the variant chosen among `candidates` with `gpus` (--gpus).
std::string line(const std::vector<select::Candidate>& candidates, const probe::HostFacts& host,
                 const std::string& gpus, Runtime runtime) {
  const auto selection = select::parse_gpu_selection(gpus, "--gpus").value();
  const auto chosen = select::select_variant(candidates, host, selection).value();
  const auto words = select::run_arguments(chosen, selection, image, runtime);
  REQUIRE_MESSAGE(words.has_value(), words.error().message);
  return util::join(*words, " ");
}

const std::string control = "--device /dev/nvidiactl --device /dev/nvidia-uvm --device /dev/nvidia-uvm-tools";

}  // namespace

TEST_CASE("a bundled-driver variant gets the control nodes and each considered GPU's node, no toolkit") {
  const std::vector candidates{bundled_variant()};
  for (const auto runtime : {Runtime::docker, Runtime::podman}) {
    CHECK(line(candidates, host_with({"9.0"}), "all", runtime) ==
          control + " --device /dev/nvidia0 registry.example/app@sha256:abc");
    CHECK(line(candidates, host_with({"9.0", "9.0", "9.0"}), "all", runtime) ==
          control + " --device /dev/nvidia0 --device /dev/nvidia1 --device /dev/nvidia2 registry.example/app@sha256:abc");
    // By index or UUID, in host order, each once.
    CHECK(line(candidates, host_with({"9.0", "9.0", "9.0"}), "2,GPU-00000000,0", runtime) ==
          control + " --device /dev/nvidia0 --device /dev/nvidia2 registry.example/app@sha256:abc");
  }
}

TEST_CASE("a bundled-driver variant refuses a MIG device: its GPU's node alone does not reach the instance") {
  const auto selection = select::parse_gpu_selection("0:1", "NVIDIA_VISIBLE_DEVICES").value();
  const auto chosen = select::select_variant({bundled_variant()}, host_with({"9.0"}), selection).value();
  const auto words = select::run_arguments(chosen, selection, image, Runtime::docker);
  REQUIRE_FALSE(words.has_value());
  CHECK(words.error().exit_code == ExitCode::usage);
  CHECK(words.error().message ==
        "NVIDIA_VISIBLE_DEVICES names MIG device 0:1, but variant bundled bundles its driver and gets device nodes "
        "only, which reach whole GPUs (docs/running.md#device-nodes)");
}

TEST_CASE("a toolkit GPU variant gets --gpus (docker) or NVIDIA's CDI names (podman), as asked") {
  const std::vector candidates{gpu_variant("cuda12.2-sm90", "12.2", "sm_90")};
  const auto one = host_with({"9.0"});
  const auto three = host_with({"9.0", "9.0", "9.0"});
  CHECK(line(candidates, one, "all", Runtime::docker) == "--gpus all registry.example/app@sha256:abc");
  CHECK(line(candidates, three, "all", Runtime::podman) ==
        "--device nvidia.com/gpu=all registry.example/app@sha256:abc");
  CHECK(line(candidates, three, "1", Runtime::docker) == "--gpus device=1 registry.example/app@sha256:abc");
  // docker reads --gpus as CSV: the quotes keep the list one field.
  CHECK(line(candidates, three, "2,GPU-00000000", Runtime::docker) ==
        "--gpus \"device=2,GPU-00000000\" registry.example/app@sha256:abc");
  CHECK(line(candidates, three, "nvidia.com/gpu=2,0:1", Runtime::podman) ==
        "--device nvidia.com/gpu=2 --device nvidia.com/gpu=0:1 registry.example/app@sha256:abc");
}

TEST_CASE("a CPU-only variant, or a GPU variant with no GPU considered, gets the reference alone") {
  CHECK(line({cpu_variant("x86-64-v3")}, host_with({"9.0"}), "all", Runtime::docker) ==
        "registry.example/app@sha256:abc");
  CHECK(line({cpu_variant("x86-64-v3")}, cpu_host("x86-64-v3"), "all", Runtime::podman) ==
        "registry.example/app@sha256:abc");
  CHECK(line({bundled_variant(), cpu_variant("x86-64-v1")}, host_with({"9.0"}), "void", Runtime::docker) ==
        "registry.example/app@sha256:abc");
  // Compatible with no GPU considered (its NVIDIA_REQUIRE_CUDA is judged on the driver alone): no --gpus.
  CHECK(line({platform_variant({"linux", "amd64", ""}, {"NVIDIA_REQUIRE_CUDA=cuda>=12.0"})}, host_with({"9.0"}),
             "none", Runtime::docker) == "registry.example/app@sha256:abc");
}

TEST_CASE("an image without hwimg annotations that NVIDIA_REQUIRE_CUDA marks for GPUs goes through the toolkit") {
  const std::vector candidates{platform_variant({"linux", "amd64", ""}, {"NVIDIA_REQUIRE_CUDA=cuda>=12.0"})};
  CHECK(line(candidates, host_with({"9.0"}), "all", Runtime::docker) == "--gpus all registry.example/app@sha256:abc");
  CHECK(line({platform_variant({"linux", "amd64", ""})}, host_with({"9.0"}), "all", Runtime::docker) ==
        "registry.example/app@sha256:abc");
}

TEST_CASE("run arguments refuse a word $(...) would split, and a selection with nothing chosen") {
  const auto selection = select::parse_gpu_selection("all", "--gpus").value();
  const auto chosen = select::select_variant({cpu_variant("x86-64-v1")}, cpu_host("x86-64-v3"), selection).value();
  CHECK(select::run_arguments(chosen, selection, "oci:my images:1", Runtime::docker).error().message ==
        "failed to make run arguments: 'oci:my images:1' holds white space, which $(...) would split");
  const auto none = select::select_variant({cpu_variant("x86-64-v4")}, cpu_host("x86-64-v3"), selection).value();
  CHECK_FALSE(select::run_arguments(none, selection, image, Runtime::docker).has_value());
}
