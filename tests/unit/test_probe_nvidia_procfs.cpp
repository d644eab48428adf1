#include <doctest/doctest.h>

#include "hwimg/probe/nvidia_procfs.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

using namespace hwimg;
using namespace hwimg::probe;

namespace {
const std::filesystem::path k_data = std::filesystem::path(HWIMG_TEST_DATA_DIR) / "probe";
const StepLog k_quiet = [](std::string_view) {};
}  // namespace

TEST_CASE("the driver version is read from both module flavours' version lines") {
  CHECK(parse_nvidia_version_file("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 "
                                  "09:35:42 UTC 2024\nGCC version:  gcc version 12.3.0\n") == "550.90.07");
  CHECK(parse_nvidia_version_file("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release "
                                  "Build  (dvs-builder@U16-A24-9-2)  Thu Oct 10 12:15:00 UTC 2024\n") == "565.57.01");
  CHECK(parse_nvidia_version_file("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  35.3.1  Release "
                                  "Build  (buildbrain@mobile-u64-6289-d7000)  Sun Mar 19 08:09:33 PDT 2023\n") ==
        "35.3.1");
  CHECK(parse_nvidia_version_file("NVRM version: NVIDIA UNIX x86_64 Kernel Module  390.157  Wed Oct 12\n") ==
        "390.157");
  CHECK_FALSE(parse_nvidia_version_file("GCC version:  gcc version 12.3.0\n").has_value());
  CHECK_FALSE(parse_nvidia_version_file("").has_value());
}

TEST_CASE("recorded procfs trees give the driver and the GPUs, never a compute capability") {
  const auto open = read_nvidia_procfs(k_data / "proc-open", k_data / "no-sys", k_quiet);
  REQUIRE(open.has_value());
  CHECK(open->source == "procfs");
  CHECK(open->driver_version == "580.159.04");
  CHECK_FALSE(open->cuda_driver_version.has_value());
  REQUIRE(open->gpus.size() == 1);
  CHECK(open->gpus[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(open->gpus[0].uuid == "GPU-3571d6cb-4307-2969-8ab3-4fcda6e00d9c");
  CHECK_FALSE(open->gpus[0].compute_capability.has_value());

  const auto proprietary = read_nvidia_procfs(k_data / "proc-proprietary", k_data / "no-sys", k_quiet);
  REQUIRE(proprietary.has_value());
  CHECK(proprietary->driver_version == "550.90.07");
  REQUIRE(proprietary->gpus.size() == 1);
  CHECK(proprietary->gpus[0].name == "NVIDIA L4");
  CHECK(proprietary->gpus[0].uuid == "GPU-3291dfa4-fcc4-0110-615b-c894a0d7c689");
}

TEST_CASE("without procfs the module version comes from sysfs, and no module means no facts") {
  const auto dir = test::scratch_directory("hwimg-procfs");
  const auto sys = dir.path() / "sys";
  REQUIRE(util::make_directories(sys / "module/nvidia").has_value());
  CHECK_FALSE(read_nvidia_procfs(dir.path() / "proc", sys, k_quiet).has_value());
  test::write_file(sys / "module/nvidia/version", "580.65.06\n");
  const auto facts = read_nvidia_procfs(dir.path() / "proc", sys, k_quiet);
  REQUIRE(facts.has_value());
  CHECK(facts->driver_version == "580.65.06");
  CHECK(facts->gpus.empty());
}
