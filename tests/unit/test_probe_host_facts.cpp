#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

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

CpuFacts cpu_of(const nlohmann::json& cpu) {
  const auto facts = parse_host_facts(nlohmann::json{{"cpu", cpu}}.dump(), "facts.json");
  REQUIRE_MESSAGE(facts.has_value(), facts.error().message);
  return facts->cpu;
}

std::vector<std::string> features_of(std::string_view target) {
  const auto& features = hw::find_cpu_target(target)->features;
  return {features.begin(), features.end()};
}

// The first processor block of a /proc/cpuinfo archspec-json records (tests/data/archspec/targets/).
struct Cpuinfo {
  std::vector<std::string> features;
  std::string implementer;
  std::string part;
};

Cpuinfo archspec_cpuinfo(const std::string& name) {
  const auto text = util::read_file(std::string(HWIMG_TEST_DATA_DIR) + "/archspec/targets/" + name);
  REQUIRE_MESSAGE(text.has_value(), name);
  Cpuinfo info;
  for (const auto& line : util::split(*text, '\n')) {
    const auto colon = line.find(':');
    const auto key = util::trim(std::string_view(line).substr(0, colon));
    const auto value = colon == std::string::npos ? std::string() : std::string(util::trim(line.substr(colon + 1)));
    if (key == "Features" && info.features.empty()) {
      for (const auto& word : util::split(value, ' ')) {
        if (!word.empty()) info.features.push_back(word);
      }
    } else if (key == "CPU implementer" && info.implementer.empty()) {
      info.implementer = value;
    } else if (key == "CPU part" && info.part.empty()) {
      info.part = value;
    }
  }
  return info;
}

// Facts a file would carry for that machine: no vendor, only what /proc/cpuinfo says.
nlohmann::json arm64_cpu(const Cpuinfo& info) {
  return {{"arch", "arm64"}, {"implementer", info.implementer}, {"cpu_part", info.part}, {"features", info.features}};
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
               .level = hw::X86Level::v3, .microarch = "haswell", .features = {"avx2", "bmi2"},
               .implementer = {}, .cpu_part = {}};
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

TEST_CASE("neoverse_v2 and neoverse_n2 facts, alike in features, are told apart by cpu_part") {
  const std::pair<const char*, const char*> machines[] = {
      {"linux-rhel9-neoverse_n2", "neoverse_n2"},        {"linux-rhel9-neoverse_v2", "neoverse_v2"},
      {"linux-ubuntu22.04-neoverse_n2", "neoverse_n2"}, {"linux-ubuntu22.04-neoverse_v2", "neoverse_v2"}};
  for (const auto& [machine, microarch] : machines) {
    CAPTURE(machine);
    const auto info = archspec_cpuinfo(machine);
    const auto cpu = cpu_of(arm64_cpu(info));
    CHECK(cpu.vendor == "ARM");  // from the implementer
    CHECK(cpu.implementer == "0x41");
    CHECK(cpu.cpu_part == info.part);
    CHECK(cpu.microarch == microarch);
  }
  // The same Features line: only the part differs.
  auto info = archspec_cpuinfo("linux-ubuntu22.04-neoverse_v2");
  info.part = "0xd49";
  CHECK(cpu_of(arm64_cpu(info)).microarch == "neoverse_n2");
  info.part = "0xD4F";
  CHECK(cpu_of(arm64_cpu(info)).cpu_part == "0xd4f");
  CHECK(cpu_of(arm64_cpu(info)).microarch == "neoverse_v2");
}

TEST_CASE("Apple M1 and M2 facts resolve to m1 and m2") {
  const auto m1 = cpu_of(arm64_cpu(archspec_cpuinfo("linux-asahi-m1")));
  CHECK(m1.vendor == "Apple");
  CHECK(m1.microarch == "m1");
  const auto m2 = cpu_of(arm64_cpu(archspec_cpuinfo("linux-asahi-m2")));
  CHECK(m2.vendor == "Apple");
  CHECK(m2.microarch == "m2");
}

TEST_CASE("CPUID vendor strings and implementer codes in facts files read as NFD's names") {
  const auto amd = cpu_of({{"arch", "amd64"}, {"vendor", "AuthenticAMD"}, {"features", features_of("zen4")}});
  CHECK(amd.vendor == "AMD");
  CHECK(amd.microarch == "zen4");
  CHECK(hw::cpu_target_compatible(*hw::find_cpu_target("zen4"), amd.vendor, hw::make_feature_set(amd.features))
            .compatible());
  const auto intel =
      cpu_of({{"arch", "amd64"}, {"vendor", "GenuineIntel"}, {"features", features_of("cascadelake")}});
  CHECK(intel.vendor == "Intel");
  CHECK(intel.microarch == "cascadelake");
  CHECK(cpu_of({{"arch", "amd64"}, {"vendor", "amd"}}).vendor == "AMD");
  CHECK(cpu_of({{"arch", "amd64"}, {"vendor", "authenticamd"}}).vendor == "AMD");
  CHECK(cpu_of({{"arch", "amd64"}, {"vendor", "Zhaoxin"}}).vendor == "Zhaoxin");
  CHECK(cpu_of({{"arch", "arm64"}, {"vendor", "0x41"}}).vendor == "ARM");
  CHECK(cpu_of({{"arch", "arm64"}, {"vendor", "ampere"}, {"implementer", "0xc0"}}).vendor == "Ampere");
  CHECK(cpu_of({{"arch", "arm64"}, {"implementer", "0x6d"}}).vendor == "0x6d");  // unknown: kept, matches no target
}

TEST_CASE("implementer and cpu_part are written where known and checked when read") {
  HostFacts facts;
  facts.cpu = cpu_of(arm64_cpu(archspec_cpuinfo("linux-rhel9-neoverse_n2")));
  const auto text = to_json(facts);
  CHECK(text.find("\"implementer\": \"0x41\"") != std::string::npos);
  CHECK(text.find("\"cpu_part\": \"0xd49\"") != std::string::npos);
  const auto again = parse_host_facts(text, "x");
  REQUIRE(again.has_value());
  CHECK(to_json(*again) == text);
  facts.cpu = cpu_of({{"arch", "amd64"}, {"vendor", "AMD"}});
  CHECK(to_json(facts).find("cpu_part") == std::string::npos);

  CHECK(error_of(R"({"cpu": {"arch": "amd64", "cpu_part": "0xd4f"}})") ==
        "failed to read host facts facts.json: cpu.cpu_part: only arm64 CPUs have one, got \"0xd4f\" for amd64");
  CHECK(error_of(R"({"cpu": {"arch": "arm64", "cpu_part": "d4f"}})") ==
        "failed to read host facts facts.json: cpu.cpu_part: expected a hexadecimal code such as \"0xd4f\", got "
        "\"d4f\"");
  CHECK(error_of(R"({"cpu": {"arch": "arm64", "implementer": "0x"}})") ==
        "failed to read host facts facts.json: cpu.implementer: expected a hexadecimal code such as \"0x41\", got "
        "\"0x\"");
  CHECK(error_of(R"({"cpu": {"arch": "arm64", "implementer": 65}})") ==
        "failed to read host facts facts.json: cpu.implementer: expected a string");
  CHECK(error_of(R"({"cpu": {"arch": "arm64", "vendor": "ARM", "implementer": "0xc0"}})") ==
        "failed to read host facts facts.json: cpu.vendor: \"ARM\" contradicts cpu.implementer \"0xc0\" (Ampere)");
}
