#include <doctest/doctest.h>

#include "hwimg/probe/report.hpp"

using namespace hwimg;
using namespace hwimg::probe;

namespace {
HostFacts sample() {
  HostFacts facts;
  facts.cpu = {.arch = hw::CpuArch::amd64, .vendor = "AMD", .model_name = "AMD EPYC 9454 48-Core Processor",
               .family = 25, .model = 17, .level = hw::X86Level::v4, .microarch = "zen4",
               .features = {"avx2", "avx512f", "fpu", "hypervisor", "pku"},
               .implementer = {}, .cpu_part = {}};
  facts.nvidia = NvidiaFacts{
      .driver_version = "580.65.06", .cuda_driver_version = "13.0", .source = "nvml",
      .gpus = {{.index = 0, .uuid = "GPU-a", .name = "NVIDIA H100 80GB HBM3", .compute_capability = "9.0",
                .brand = "NVIDIA", .memory_mib = 81559},
               {.index = 1, .uuid = "GPU-b", .name = "NVIDIA L4", .compute_capability = "8.9", .brand = "NVIDIA",
                .memory_mib = 22491},
               {.index = 2, .uuid = "GPU-c", .name = "NVIDIA H100 80GB HBM3", .compute_capability = "9.0",
                .brand = "NVIDIA", .memory_mib = 81559}}};
  return facts;
}
}  // namespace

TEST_CASE("the NFD file carries hwimg.org labels with valid values only") {
  CHECK(to_nfd(sample()) ==
        "# Node Feature Discovery local features, written by hwimg probe --format nfd\n"
        "hwimg.org/cpu.arch=amd64\n"
        "hwimg.org/cpu.vendor=AMD\n"
        "hwimg.org/cpu.level=x86-64-v4\n"
        "hwimg.org/cpu.target=zen4\n"
        "hwimg.org/cpu.avx2=true\n"
        "hwimg.org/cpu.avx512f=true\n"
        "hwimg.org/nvidia.driver=580.65.06\n"
        "hwimg.org/nvidia.cuda=13.0\n"
        "hwimg.org/nvidia.gpu.count=3\n"
        "hwimg.org/nvidia.gpu.compute-capability.8.9=true\n"
        "hwimg.org/nvidia.gpu.compute-capability.9.0=true\n");
  auto facts = sample();
  facts.nvidia.reset();
  facts.cpu.vendor = "Weird Vendor!";
  const auto nfd = to_nfd(facts);
  CHECK(nfd.find("cpu.vendor") == std::string::npos);
  CHECK(nfd.find("nvidia") == std::string::npos);
}

TEST_CASE("the text report names each GPU and the driver") {
  const auto text = to_text(sample());
  CHECK(text.find("Level:     x86-64-v4\n") != std::string::npos);
  CHECK(text.find("Target:    zen4\n") != std::string::npos);
  CHECK(text.find("NVIDIA:    driver 580.65.06, CUDA 13.0 (from nvml)\n") != std::string::npos);
  CHECK(text.find("GPU 1:     NVIDIA L4, compute capability 8.9, 22491 MiB, GPU-b\n") != std::string::npos);
  auto none = sample();
  none.nvidia.reset();
  CHECK(to_text(none).ends_with("NVIDIA:    no driver\n"));
}
