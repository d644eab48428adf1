#include <doctest/doctest.h>

#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/hw/target_hints.hpp"

using namespace hwimg::hw;

namespace {
std::string gpu_error(std::string_view name) { return parse_gpu_target(name).error().message; }
// What follows the suggested nvcc name in a capability spelling's hint.
const std::string rest = "? GPU targets are nvcc's names: sm_XY for SASS, compute_XY for PTX)";
}  // namespace

TEST_CASE("a compute capability as PyTorch writes it suggests the nvcc target") {
  CHECK(gpu_error("9.0") == "unknown GPU target '9.0' (did you mean sm_90" + rest);
  CHECK(gpu_target_hint("9.0a") == " (did you mean sm_90a" + rest);
  CHECK(gpu_target_hint("8.6+PTX") == " (did you mean [sm_86, compute_86]" + rest);
  CHECK(gpu_target_hint("10.0f") == " (did you mean sm_100f" + rest);
}

TEST_CASE("a CUDA_ARCHITECTURES entry suggests SASS and PTX as CMake builds them") {
  CHECK(gpu_target_hint("90") == " (did you mean [sm_90, compute_90]" + rest);
  CHECK(gpu_target_hint("90-real") == " (did you mean sm_90" + rest);
  CHECK(gpu_target_hint("120-virtual") == " (did you mean compute_120" + rest);
  CHECK(gpu_target_hint("90a-real") == " (did you mean sm_90a" + rest);
}

TEST_CASE("a capability no toolkit has gets no capability suggestion") {
  CHECK(gpu_target_hint("9.5").find("GPU targets are") == std::string::npos);
  CHECK(gpu_target_hint("86a").find("GPU targets are") == std::string::npos);  // no sm_86a
  CHECK(gpu_target_hint("7.13").find("GPU targets are") == std::string::npos);
}

TEST_CASE("an architecture name lists its targets") {
  CHECK(gpu_error("hopper") == "unknown GPU target 'hopper' (Hopper is compute capability 9.0: did you mean sm_90?)");
  CHECK(gpu_target_hint("Ampere") == " (Ampere is compute capability 8.0, 8.6, 8.7: did you mean sm_80, sm_86 or sm_87?)");
  CHECK(gpu_target_hint("ada-lovelace") == " (Ada Lovelace is compute capability 8.9: did you mean sm_89?)");
  CHECK(gpu_target_hint("BLACKWELL_ULTRA") == " (Blackwell Ultra is compute capability 10.3: did you mean sm_103?)");
}

TEST_CASE("a GPU's product name suggests its target, as nvidia-smi or a spec sheet writes it") {
  CHECK(gpu_error("H100") == "unknown GPU target 'H100' (H100 is compute capability 9.0: did you mean sm_90?)");
  CHECK(gpu_target_hint("NVIDIA A100") == " (A100 is compute capability 8.0: did you mean sm_80?)");
  CHECK(gpu_target_hint("a10") == " (A10 is compute capability 8.6: did you mean sm_86?)");  // not A100's
  CHECK(gpu_target_hint("Tesla T4") == " (T4 is compute capability 7.5: did you mean sm_75?)");
  CHECK(gpu_target_hint("jetson-agx-orin") == " (Jetson Orin is compute capability 8.7: did you mean sm_87?)");
  CHECK(gpu_target_hint("GeForce RTX 4090") == " (GeForce RTX 40xx is compute capability 8.9: did you mean sm_89?)");
  CHECK(gpu_target_hint("rtx5080") == " (GeForce RTX 50xx is compute capability 12.0: did you mean sm_120?)");
  CHECK(gpu_target_hint("GB200") == " (GB200 is compute capability 10.0: did you mean sm_100?)");
}

TEST_CASE("typos still get the nearest target, and native an explanation") {
  CHECK(gpu_target_hint("sm90") == " (did you mean sm_90?)");
  CHECK(gpu_target_hint("native").find("hwimg probe prints this host's compute capabilities") != std::string::npos);
  CHECK(gpu_target_hint("banana").empty());
}

TEST_CASE("a GCC -march or -mcpu name suggests the target it builds for") {
  CHECK(cpu_target_hint("znver4") == " (did you mean zen4? znver4 is its GCC -march name)");
  CHECK(cpu_target_hint("znver3") == " (did you mean zen3? znver3 is its GCC -march name)");  // not zen4's old flags
  CHECK(cpu_target_hint("neoverse-v2") == " (did you mean neoverse_v2? neoverse-v2 is its GCC -mcpu name)");
  CHECK(cpu_target_hint("corei7") == " (did you mean nehalem? corei7 is its GCC -march name)");  // only an older GCC's
}

TEST_CASE("a platform variant suggests its level; native an explanation; typos the nearest name") {
  CHECK(cpu_target_hint("v3") == " (did you mean x86-64-v3?)");
  CHECK(cpu_target_hint("linux/amd64/v4") == " (did you mean x86-64-v4?)");
  CHECK(cpu_target_hint("v5") != " (did you mean x86-64-v5?)");
  CHECK(cpu_target_hint("native").find("hwimg probe prints this host's level") != std::string::npos);
  CHECK(cpu_target_hint("haswel") == " (did you mean haswell?)");
}
