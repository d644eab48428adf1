#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/probe/report.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

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
        "hwimg.org/cpu.level-num=4\n"
        "hwimg.org/cpu.target=zen4\n"
        "hwimg.org/cpu.avx2=true\n"
        "hwimg.org/cpu.avx512f=true\n"
        "hwimg.org/nvidia.driver=580.65.06\n"
        "hwimg.org/nvidia.cuda=13.0\n"
        "hwimg.org/nvidia.gpu.count=3\n"
        "hwimg.org/nvidia.gpu.compute-capability.8.9=true\n"
        "hwimg.org/nvidia.gpu.compute-capability.9.0=true\n"
        "feature.node.kubernetes.io/cpu-cpuid.X86_64_V1=true\n"
        "feature.node.kubernetes.io/cpu-cpuid.X86_64_V2=true\n"
        "feature.node.kubernetes.io/cpu-cpuid.X86_64_V3=true\n"
        "feature.node.kubernetes.io/cpu-cpuid.X86_64_V4=true\n"
        "nvidia.com/cuda.driver-version.major=580\n"
        "nvidia.com/cuda.driver-version.minor=65\n"
        "nvidia.com/cuda.driver-version.revision=06\n"
        "nvidia.com/cuda.driver-version.full=580.65.06\n"
        "nvidia.com/cuda.runtime-version.major=13\n"
        "nvidia.com/cuda.runtime-version.minor=0\n"
        "nvidia.com/cuda.runtime-version.full=13.0\n"
        "nvidia.com/gpu.compute.major=8\n"
        "nvidia.com/gpu.compute.minor=9\n");
  auto facts = sample();
  facts.nvidia.reset();
  facts.cpu.vendor = "Weird Vendor!";
  const auto nfd = to_nfd(facts);
  CHECK(nfd.find("cpu.vendor") == std::string::npos);
  CHECK(nfd.find("nvidia") == std::string::npos);
}

namespace {
// The NFD file hwimg writes for a recorded facts file of tests/data/select.
std::string nfd_for(const std::string& name) {
  const auto text = util::read_file(std::filesystem::path(HWIMG_TEST_DATA_DIR) / "select" / name);
  REQUIRE(text);
  const auto facts = parse_host_facts(*text, name);
  REQUIRE(facts);
  return to_nfd(*facts);
}

// The lines under NFD's and GFD's names, and hwimg's level lines: what the recorded hosts pin exactly.
std::vector<std::string> level_and_foreign_lines(const std::string& nfd) {
  std::vector<std::string> lines;
  for (const auto& line : util::split(nfd, '\n')) {
    if (line.empty() || line.starts_with('#')) continue;
    if (!line.starts_with("hwimg.org/") || line.starts_with("hwimg.org/cpu.level")) lines.push_back(line);
  }
  return lines;
}
}  // namespace

TEST_CASE("NFD and GFD names: an H100 host at x86-64-v4 with driver 580 (tests/data/select/host-h100-580.json)") {
  const auto nfd = nfd_for("host-h100-580.json");
  CHECK(level_and_foreign_lines(nfd) == std::vector<std::string>{
                                           "hwimg.org/cpu.level=x86-64-v4",
                                           "hwimg.org/cpu.level-num=4",
                                           "feature.node.kubernetes.io/cpu-cpuid.X86_64_V1=true",
                                           "feature.node.kubernetes.io/cpu-cpuid.X86_64_V2=true",
                                           "feature.node.kubernetes.io/cpu-cpuid.X86_64_V3=true",
                                           "feature.node.kubernetes.io/cpu-cpuid.X86_64_V4=true",
                                           "nvidia.com/cuda.driver-version.major=580",
                                           "nvidia.com/cuda.driver-version.minor=65",
                                           "nvidia.com/cuda.driver-version.revision=06",
                                           "nvidia.com/cuda.driver-version.full=580.65.06",
                                           "nvidia.com/cuda.runtime-version.major=13",
                                           "nvidia.com/cuda.runtime-version.minor=0",
                                           "nvidia.com/cuda.runtime-version.full=13.0",
                                           "nvidia.com/gpu.compute.major=9",
                                           "nvidia.com/gpu.compute.minor=0",
                                       });
  // hwimg's own names are unchanged beside them.
  CHECK(nfd.find("\nhwimg.org/nvidia.driver=580.65.06\nhwimg.org/nvidia.cuda=13.0\nhwimg.org/nvidia.gpu.count=1\n"
                 "hwimg.org/nvidia.gpu.compute-capability.9.0=true\n") != std::string::npos);
}

TEST_CASE("NFD and GFD names: a CPU-only host at x86-64-v3 gets V1..V3 and no GPU labels") {
  const auto nfd = nfd_for("host-no-gpu.json");
  CHECK(level_and_foreign_lines(nfd) == std::vector<std::string>{
                                           "hwimg.org/cpu.level=x86-64-v3",
                                           "hwimg.org/cpu.level-num=3",
                                           "feature.node.kubernetes.io/cpu-cpuid.X86_64_V1=true",
                                           "feature.node.kubernetes.io/cpu-cpuid.X86_64_V2=true",
                                           "feature.node.kubernetes.io/cpu-cpuid.X86_64_V3=true",
                                       });
  CHECK(nfd.find("X86_64_V4") == std::string::npos);
  CHECK(nfd.find("nvidia") == std::string::npos);
}

TEST_CASE("NFD and GFD names: mixed GPUs (A100 and H100) get the lowest compute capability") {
  const auto nfd = nfd_for("host-mixed-580.json");
  const auto lines = level_and_foreign_lines(nfd);
  REQUIRE(lines.size() >= 2);
  CHECK(std::vector<std::string>(lines.end() - 2, lines.end()) ==
        std::vector<std::string>{"nvidia.com/gpu.compute.major=8", "nvidia.com/gpu.compute.minor=0"});
  // hwimg's own labels still name every capability the node has.
  CHECK(nfd.find("hwimg.org/nvidia.gpu.compute-capability.8.0=true\n") != std::string::npos);
  CHECK(nfd.find("hwimg.org/nvidia.gpu.compute-capability.9.0=true\n") != std::string::npos);
}

TEST_CASE("NFD and GFD names: an arm64 host has no x86-64 level labels") {
  const auto nfd = nfd_for("host-arm64.json");
  CHECK(level_and_foreign_lines(nfd).empty());
  CHECK(nfd.find("hwimg.org/cpu.arch=arm64\n") != std::string::npos);
}

TEST_CASE("NFD and GFD names: levels are cumulative, versions split as GFD splits them") {
  auto facts = sample();
  for (const auto level : {hw::X86Level::v1, hw::X86Level::v2, hw::X86Level::v3, hw::X86Level::v4}) {
    facts.cpu.level = level;
    const auto nfd = to_nfd(facts);
    const int number = static_cast<int>(level);
    CHECK(nfd.find(fmt::format("hwimg.org/cpu.level-num={}\n", number)) != std::string::npos);
    for (int n = 1; n <= 4; ++n) {
      CHECK((nfd.find(fmt::format("cpu-cpuid.X86_64_V{}=true\n", n)) != std::string::npos) == (n <= number));
    }
  }
  // A two-part driver version: GFD writes an empty revision (an empty label value is valid).
  facts.nvidia->driver_version = "390.157";
  auto nfd = to_nfd(facts);
  CHECK(nfd.find("nvidia.com/cuda.driver-version.major=390\nnvidia.com/cuda.driver-version.minor=157\n"
                 "nvidia.com/cuda.driver-version.revision=\nnvidia.com/cuda.driver-version.full=390.157\n") !=
        std::string::npos);
  // What procfs alone gives (a driver version, GPUs without capabilities): only the driver labels.
  facts.nvidia->cuda_driver_version.reset();
  for (auto& gpu : facts.nvidia->gpus) gpu.compute_capability.reset();
  nfd = to_nfd(facts);
  CHECK(nfd.find("nvidia.com/cuda.driver-version.major=390\n") != std::string::npos);
  CHECK(nfd.find("cuda.runtime-version") == std::string::npos);
  CHECK(nfd.find("gpu.compute.") == std::string::npos);
  // No level known (an unrecognised CPU): neither the number nor NFD's flags.
  facts.cpu.level.reset();
  nfd = to_nfd(facts);
  CHECK(nfd.find("cpu.level") == std::string::npos);
  CHECK(nfd.find("X86_64_V") == std::string::npos);
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

TEST_CASE("the text report says which features keep a CPU out of the nearest microarchitecture") {
  auto facts = sample();
  facts.cpu.microarch.reset();
  // Zen's features but fsgsbase and rdseed, as a hypervisor may hide them.
  facts.cpu.features.clear();
  for (const auto& feature : hw::find_cpu_target("zen")->features) {
    if (feature != "fsgsbase" && feature != "rdseed") facts.cpu.features.push_back(feature);
  }
  CHECK(to_text(facts).find("Target:    (no named microarchitecture: zen also needs fsgsbase, rdseed, which this "
                            "CPU does not report)\n") != std::string::npos);
  // A generic CPU asked for with HWIMG_OVERRIDE_CPU_LEVEL lacks them on purpose.
  facts.overrides = {"HWIMG_OVERRIDE_CPU_LEVEL=\"x86-64-v3\""};
  CHECK(to_text(facts).find("Target:    (no named microarchitecture)\n") != std::string::npos);

  // Beyond a named target only in a VM: on bare metal the deeper target is just a newer CPU.
  facts.overrides.clear();
  facts.cpu.microarch = "icelake";
  facts.cpu.vendor = "Intel";
  facts.cpu.features.clear();
  for (const auto& feature : hw::find_cpu_target("sapphirerapids")->features) {
    if (feature != "waitpkg") facts.cpu.features.push_back(feature);
  }
  CHECK(to_text(facts).find("Target:    icelake\n") != std::string::npos);
  facts.cpu.features.push_back("hypervisor");
  std::ranges::sort(facts.cpu.features);
  CHECK(to_text(facts).find("Target:    icelake (sapphirerapids also needs waitpkg, which this CPU does not report)\n") !=
        std::string::npos);
}
