// HWIMG_OVERRIDE_COMPUTE_CAPABILITY and HWIMG_OVERRIDE_CPU_LEVEL: what they accept, the usage errors
// (exit 2) for what they do not, and the facts they leave (docs/selection.md#overrides).

#include <algorithm>

#include <doctest/doctest.h>

#include "hwimg/probe/overrides.hpp"
#include "hwimg/probe/report.hpp"

using namespace hwimg;

namespace {

std::string capability_error(std::string_view text) {
  const auto parsed = probe::parse_compute_capability_override(text);
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().exit_code == ExitCode::usage);
  return parsed.error().message;
}

std::string level_error(std::string_view text) {
  const auto parsed = probe::parse_cpu_level_override(text);
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().exit_code == ExitCode::usage);
  return parsed.error().message;
}

probe::NvidiaFacts two_probed_gpus() {
  probe::NvidiaFacts nvidia{.driver_version = "580.65.06", .cuda_driver_version = "13.0", .source = "nvml", .gpus = {}};
  for (int i = 0; i < 2; ++i) {
    probe::GpuFacts gpu;
    gpu.index = i;
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.name = "NVIDIA L4";
    gpu.compute_capability = "8.9";
    nvidia.gpus.push_back(gpu);
  }
  return nvidia;
}

}  // namespace

TEST_CASE("HWIMG_OVERRIDE_COMPUTE_CAPABILITY: one capability per GPU, empty for none") {
  CHECK(probe::parse_compute_capability_override("9.0").value() == std::vector<hw::ComputeCapability>{{9, 0}});
  CHECK(probe::parse_compute_capability_override(" 8.0, 9.0 ,12.0").value() ==
        std::vector<hw::ComputeCapability>{{8, 0}, {9, 0}, {12, 0}});
  CHECK(probe::parse_compute_capability_override("").value().empty());
  CHECK(probe::capability_list_text({{8, 0}, {10, 3}}) == "8.0,10.3");

  CHECK(capability_error("sm_90a") ==
        "failed to read HWIMG_OVERRIDE_COMPUTE_CAPABILITY: expected compute capabilities such as \"9.0\" or "
        "\"8.0,9.0\" (one per GPU), or nothing for no GPU, got \"sm_90a\" (did you mean \"9.0\"?)");
  CHECK(capability_error("8.0,120").ends_with("got \"8.0,120\" (did you mean \"12.0\"?)"));
  CHECK(capability_error("9").ends_with("got \"9\" (did you mean \"9.0\"?)"));
  CHECK(capability_error("8.0,,9.0").ends_with("got \"8.0,,9.0\""));
  CHECK(capability_error("hopper").ends_with("got \"hopper\""));
}

TEST_CASE("HWIMG_OVERRIDE_COMPUTE_CAPABILITY replaces the probed GPUs") {
  auto nvidia = std::optional(two_probed_gpus());
  probe::apply_compute_capability_override(nvidia, {{9, 0}});
  REQUIRE(nvidia->gpus.size() == 1);  // the list is the GPUs: the second L4 is dropped
  CHECK(nvidia->gpus[0].uuid == "GPU-0");
  CHECK(nvidia->gpus[0].compute_capability == "9.0");
  CHECK(nvidia->source == "nvml");

  nvidia = two_probed_gpus();
  probe::apply_compute_capability_override(nvidia, {{8, 0}, {9, 0}, {10, 0}});
  REQUIRE(nvidia->gpus.size() == 3);
  CHECK(nvidia->gpus[1].name == "NVIDIA L4");
  CHECK(nvidia->gpus[1].compute_capability == "9.0");
  CHECK(nvidia->gpus[2].index == 2);
  CHECK(nvidia->gpus[2].name.empty());
  CHECK(nvidia->gpus[2].compute_capability == "10.0");

  nvidia = two_probed_gpus();
  probe::apply_compute_capability_override(nvidia, {});
  CHECK(nvidia->gpus.empty());
  CHECK(nvidia->driver_version == "580.65.06");  // the driver stays, without GPUs

  std::optional<probe::NvidiaFacts> none;
  probe::apply_compute_capability_override(none, {});
  CHECK_FALSE(none.has_value());
  probe::apply_compute_capability_override(none, {{9, 0}});
  REQUIRE(none.has_value());
  CHECK(none->source == "override");
  CHECK_FALSE(none->driver_version.has_value());
  CHECK(none->gpus.size() == 1);
}

TEST_CASE("HWIMG_OVERRIDE_CPU_LEVEL: a generic level of either architecture") {
  CHECK(probe::parse_cpu_level_override("x86-64-v3").value()->name == "x86-64-v3");
  CHECK(probe::parse_cpu_level_override("x86_64_v2").value()->name == "x86-64-v2");
  CHECK(probe::parse_cpu_level_override("armv8.2a").value()->name == "armv8.2a");

  CHECK(level_error("x86-64v3") ==
        "failed to read HWIMG_OVERRIDE_CPU_LEVEL: expected a CPU level such as \"x86-64-v3\" or \"armv8.2a\", got "
        "\"x86-64v3\" (did you mean x86-64-v3?)");
  CHECK(level_error("zen4") == "failed to read HWIMG_OVERRIDE_CPU_LEVEL: \"zen4\" is a microarchitecture, not a "
                               "level (did you mean x86-64-v4?)");
  CHECK(level_error("neoverse_v2").ends_with("(did you mean armv9.0a?)"));
}

TEST_CASE("HWIMG_OVERRIDE_CPU_LEVEL makes the CPU a generic one of that level") {
  probe::CpuFacts cpu;
  cpu.arch = hw::CpuArch::amd64;
  cpu.vendor = "AMD";
  const auto v4 = hw::x86_level_features(hw::X86Level::v4);
  cpu.features.assign(v4.begin(), v4.end());
  cpu.features.emplace_back("avx512_bf16");
  probe::derive_cpu_facts(cpu);
  REQUIRE(cpu.level == hw::X86Level::v4);

  REQUIRE(probe::apply_cpu_level_override(cpu, *probe::parse_cpu_level_override("x86-64-v2").value()));
  CHECK(cpu.level == hw::X86Level::v2);
  CHECK_FALSE(cpu.microarch.has_value());
  CHECK(hw::x86_level_of(hw::make_feature_set(cpu.features)) == hw::X86Level::v2);
  CHECK(std::ranges::find(cpu.features, "avx2") == cpu.features.end());
  CHECK(cpu.vendor == "AMD");

  const auto other_arch = probe::apply_cpu_level_override(cpu, *probe::parse_cpu_level_override("armv8.2a").value());
  REQUIRE_FALSE(other_arch);
  CHECK(other_arch.error().exit_code == ExitCode::usage);
  CHECK(other_arch.error().message ==
        "failed to read HWIMG_OVERRIDE_CPU_LEVEL: armv8.2a is an arm64 level; this host is amd64");
}

TEST_CASE("hwimg probe's text names the overrides in effect") {
  probe::HostFacts facts;
  facts.cpu.arch = hw::CpuArch::amd64;
  CHECK(probe::to_text(facts).find("Overrides:") == std::string::npos);
  facts.overrides = {"HWIMG_OVERRIDE_CPU_LEVEL=\"x86-64-v2\"", "HWIMG_OVERRIDE_COMPUTE_CAPABILITY=\"\""};
  CHECK(probe::to_text(facts).find("\nOverrides: HWIMG_OVERRIDE_CPU_LEVEL=\"x86-64-v2\" "
                                   "HWIMG_OVERRIDE_COMPUTE_CAPABILITY=\"\"\n") != std::string::npos);
}
