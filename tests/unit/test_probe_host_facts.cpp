#include <doctest/doctest.h>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/probe/host_facts.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

using namespace hwimg;
using namespace hwimg::probe;

namespace {

std::string data(const std::string& name) {
  auto text = util::read_file(std::string(HWIMG_TEST_DATA_DIR) + "/probe/" + name);
  REQUIRE_MESSAGE(text.has_value(), name);
  return *text;
}

std::string error_of(std::string_view text) {
  const auto facts = parse_host_facts(text, "facts.json");
  REQUIRE_FALSE(facts.has_value());
  return facts.error().message;
}

}  // namespace

TEST_CASE("the design's example facts parse with every field") {
  const auto facts = parse_host_facts(R"({
    "schema": 1, "os": "linux",
    "cpu": {"arch": "amd64", "vendor": "AMD", "model_name": "AMD EPYC 9454 48-Core Processor",
            "family": 25, "model": 17, "level": "x86-64-v4", "microarch": "zen4",
            "features": ["avx", "avx2", "avx512f", "fma", "sse4_2"]},
    "nvidia": {"driver_version": "580.65.06", "cuda_driver_version": "13.0", "source": "nvml",
               "gpus": [{"index": 0, "uuid": "GPU-1", "name": "NVIDIA H100 80GB HBM3",
                         "compute_capability": "9.0", "brand": "NVIDIA", "memory_mib": 81559}]}})",
                                      "facts.json");
  REQUIRE_MESSAGE(facts.has_value(), facts.error().message);
  CHECK(facts->cpu.vendor == "AMD");
  CHECK(facts->cpu.family == 25);
  CHECK(facts->cpu.level == hw::X86Level::v4);
  CHECK(facts->cpu.microarch == "zen4");
  CHECK(facts->cpu.features.size() == 5);
  REQUIRE(facts->nvidia.has_value());
  CHECK(facts->nvidia->driver_version == "580.65.06");
  CHECK(facts->nvidia->gpus.at(0).compute_capability == "9.0");
  CHECK(facts->nvidia->gpus.at(0).memory_mib == 81559U);
}

TEST_CASE("level and microarch are derived from features and vendor when absent") {
  std::string features;
  for (const auto& feature : hw::find_cpu_target("zen4")->features) {
    if (feature != "pku" && feature != "flush_l1d") {
      features += (features.empty() ? "\"" : ", \"") + feature + "\"";
    }
  }
  const auto facts = parse_host_facts(
      R"({"cpu": {"arch": "amd64", "vendor": "AMD", "features": [)" + features + "]}, \"nvidia\": null}", "f.json");
  REQUIRE_MESSAGE(facts.has_value(), facts.error().message);
  CHECK(facts->cpu.level == hw::X86Level::v4);
  CHECK(facts->cpu.microarch == "zen4");
  CHECK_FALSE(facts->nvidia.has_value());

  const auto plain = parse_host_facts(R"({"cpu": {"arch": "amd64", "features": ["sse3", "ssse3"]}})", "f.json");
  REQUIRE(plain.has_value());
  CHECK(plain->cpu.level == hw::X86Level::v1);
  CHECK(plain->cpu.features == std::vector<std::string>{"pni", "ssse3"});
  CHECK_FALSE(plain->cpu.microarch.has_value());
}

TEST_CASE("unknown keys are ignored") {
  const auto facts = parse_host_facts(
      R"({"schema": 1, "extra": [1, 2], "cpu": {"arch": "arm64", "vendor": "ARM", "cache": {"l2": 1}}})", "f.json");
  REQUIRE_MESSAGE(facts.has_value(), facts.error().message);
  CHECK(facts->cpu.arch == hw::CpuArch::arm64);
  CHECK_FALSE(facts->cpu.level.has_value());
}

TEST_CASE("malformed facts are refused naming the key") {
  CHECK(error_of(R"({"cpu": {"arch": "amd64", "features": "avx2"}})") ==
        "failed to read host facts facts.json: cpu.features: expected an array of strings");
  CHECK(error_of(R"({"cpu": {"arch": "amd64", "features": ["avx2", 3]}})") ==
        "failed to read host facts facts.json: cpu.features: expected an array of strings");
  CHECK(error_of(R"({"cpu": {"arch": "amd64", "family": "6"}})") ==
        "failed to read host facts facts.json: cpu.family: expected an integer");
  CHECK(error_of(R"({"cpu": {"arch": "sparc"}})") ==
        "failed to read host facts facts.json: cpu.arch: unknown architecture \"sparc\" (expected \"amd64\" or "
        "\"arm64\")");
  CHECK(error_of(R"({"cpu": {"vendor": "AMD"}})") ==
        "failed to read host facts facts.json: cpu.arch: missing (expected \"amd64\" or \"arm64\")");
  CHECK(error_of(R"({"cpu": {"arch": "amd64", "level": "x86-64-v5"}})") ==
        "failed to read host facts facts.json: cpu.level: unknown level \"x86-64-v5\" for amd64 (expected "
        "x86-64-v1 ... x86-64-v4)");
  CHECK(error_of(R"({"cpu": {"arch": "amd64", "microarch": "zne4"}})") ==
        "failed to read host facts facts.json: cpu.microarch: unknown microarchitecture \"zne4\" (did you mean zen?)");
  CHECK(error_of(R"({"cpu": []})") == "failed to read host facts facts.json: cpu: expected an object");
  CHECK(error_of(R"({"os": "linux"})") == "failed to read host facts facts.json: cpu: missing");
  CHECK(error_of(R"({"schema": 2, "cpu": {"arch": "amd64"}})") ==
        "failed to read host facts facts.json: schema: unsupported version 2 (this hwimg reads 1)");
  CHECK(error_of(R"({"cpu": {"arch": "amd64"}, "nvidia": []})") ==
        "failed to read host facts facts.json: nvidia: expected an object or null");
  CHECK(error_of(R"({"cpu": {"arch": "amd64"}, "nvidia": {"cuda_driver_version": 12.4}})") ==
        "failed to read host facts facts.json: nvidia.cuda_driver_version: expected a string");
  CHECK(error_of(R"({"cpu": {"arch": "amd64"}, "nvidia": {"driver_version": "latest"}})") ==
        "failed to read host facts facts.json: nvidia.driver_version: expected a version such as \"580.65.06\", "
        "got \"latest\"");
  CHECK(error_of(R"({"cpu": {"arch": "amd64"}, "nvidia": {"gpus": {}}})") ==
        "failed to read host facts facts.json: nvidia.gpus: expected an array of objects");
  CHECK(error_of(R"({"cpu": {"arch": "amd64"}, "nvidia": {"gpus": [{"compute_capability": 9.0}]}})") ==
        "failed to read host facts facts.json: nvidia.gpus[0].compute_capability: expected a string");
  CHECK(error_of(R"({"cpu": {"arch": "amd64"}, "nvidia": {"gpus": [{}, {"memory_mib": -1}]}})") ==
        "failed to read host facts facts.json: nvidia.gpus[1].memory_mib: expected a non-negative integer");
  CHECK(error_of(R"({"cpu": {"arch": "amd64"}, "nvidia": {"gpus": [{"compute_capability": "sm_90"}]}})") ==
        "failed to read host facts facts.json: nvidia.gpus[0].compute_capability: expected a version such as "
        "\"9.0\", got \"sm_90\"");
  CHECK(error_of("[]") == "failed to read host facts facts.json: (top level): expected an object");
  CHECK(util::split(error_of("{\"cpu\": "), ':').at(0) == "failed to read host facts facts.json");
  CHECK(error_of("{\"cpu\": ").find("invalid JSON: parse error at line 1, column 9") != std::string::npos);
}

TEST_CASE("facts written by to_json read back the same") {
  HostFacts facts;
  facts.cpu = {.arch = hw::CpuArch::amd64, .vendor = "Intel", .model_name = "Xeon", .family = 6, .model = 143,
               .level = hw::X86Level::v3, .microarch = "haswell", .features = {"avx2", "bmi2"}, .cpu_part = {}};
  facts.nvidia = NvidiaFacts{.driver_version = "580.65.06", .cuda_driver_version = "13.0", .source = "nvml",
                             .gpus = {{.index = 0, .uuid = "GPU-a", .name = "NVIDIA H100 80GB HBM3",
                                       .compute_capability = "9.0", .brand = std::nullopt, .memory_mib = 81559}}};
  const auto again = parse_host_facts(to_json(facts), "x");
  REQUIRE_MESSAGE(again.has_value(), again.error().message);
  CHECK(to_json(*again) == to_json(facts));
  CHECK(to_json(facts).find("\"brand\": null") != std::string::npos);
}

TEST_CASE("what hwimg probe printed on an H100 machine agrees with nvidia-smi there") {
  // nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,uuid --format=csv
  const auto rows = util::split(data("gpu-h100-nvidia-smi.csv"), '\n');
  const auto smi = util::split(rows.at(1), ',');
  const auto field = [&](std::size_t i) { return std::string(util::trim(smi.at(i))); };

  const auto nvml = parse_host_facts(data("gpu-h100-probe-nvml.json"), "gpu-h100-probe-nvml.json");
  REQUIRE_MESSAGE(nvml.has_value(), nvml.error().message);
  REQUIRE(nvml->nvidia.has_value());
  const auto& nvidia = *nvml->nvidia;
  CHECK(nvidia.source == "nvml");
  CHECK(nvidia.driver_version == field(2));
  CHECK(nvidia.cuda_driver_version == "13.0");
  REQUIRE(nvidia.gpus.size() == 1);
  CHECK(nvidia.gpus[0].name == field(0));
  CHECK(nvidia.gpus[0].compute_capability == field(1));
  CHECK(fmt::format("{} MiB", nvidia.gpus[0].memory_mib.value_or(0)) == field(3));
  CHECK(nvidia.gpus[0].uuid == field(4));
  CHECK(nvidia.gpus[0].brand == "NVIDIA");
  CHECK(nvml->cpu.microarch == "icelake");

  // The CUDA driver API gives the same GPU (its UUID bytes format to NVML's string).
  const auto cuda = parse_host_facts(data("gpu-h100-probe-cuda.json"), "gpu-h100-probe-cuda.json");
  REQUIRE(cuda.has_value());
  CHECK(cuda->nvidia->source == "cuda");
  CHECK(cuda->nvidia->driver_version == field(2));
  CHECK(cuda->nvidia->gpus.at(0).uuid == field(4));
  CHECK(cuda->nvidia->gpus.at(0).compute_capability == field(1));

  const auto procfs = parse_host_facts(data("gpu-h100-probe-procfs.json"), "gpu-h100-probe-procfs.json");
  REQUIRE(procfs.has_value());
  CHECK(procfs->nvidia->source == "procfs");
  CHECK_FALSE(procfs->nvidia->cuda_driver_version.has_value());
  CHECK_FALSE(procfs->nvidia->gpus.at(0).compute_capability.has_value());
  CHECK(procfs->nvidia->gpus.at(0).name == field(0));
}
