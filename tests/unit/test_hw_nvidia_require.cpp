#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "hwimg/hw/nvidia_require.hpp"
#include "hwimg/util/strings.hpp"
#include "test_support.hpp"

using namespace hwimg::hw;
using hwimg::test::nvidia::require_cuda_11_8;
using hwimg::test::nvidia::require_cuda_12_6_3;

namespace {

RequireExpression parse(std::string_view text) { return parse_nvidia_require(text).value(); }

std::string parse_error(std::string_view text) { return parse_nvidia_require(text).error().message; }

RequireHost host(std::string_view cuda, std::string_view driver, std::vector<RequireDevice> devices) {
  return {parse_cuda_version(cuda), DriverVersion::parse(driver), std::move(devices)};
}

RequireDevice gpu(int major, int minor, std::string brand = "NVIDIA") { return {{major, minor}, std::move(brand)}; }

bool accepts(const RequireExpression& expression, const RequireHost& facts) {
  return !unsatisfied_condition(expression, facts).has_value();
}

}  // namespace

TEST_CASE("NVIDIA's own requirement strings parse and print back") {
  CHECK(parse("cuda>=11.4").str() == "cuda>=11.4");
  const auto expression = parse(require_cuda_11_8);
  CHECK(expression.alternatives.size() == 11);
  CHECK(expression.alternatives[1].terms.size() == 3);
  CHECK(expression.alternatives[1].terms[0] == RequireTerm{RequireKey::brand, RequireOp::eq, "tesla"});
  CHECK(expression.str() == require_cuda_11_8);
  CHECK(parse(require_cuda_12_6_3()).alternatives.size() == 37);
}

TEST_CASE("evaluation of NVIDIA's 11.8 image requirement") {
  const auto expression = parse(require_cuda_11_8);
  CHECK(accepts(expression, host("12.2", "535.104.05", {gpu(8, 0)})));
  CHECK(accepts(expression, host("11.4", "470.82.01", {gpu(7, 0, "Tesla")})));
  CHECK(accepts(expression, host("11.4", "470.82.01", {gpu(8, 6, "GeForce RTX")})));
  CHECK(accepts(expression, host("11.4", "470.82.01", {gpu(7, 5, "Quadro RTX")})));
  CHECK(accepts(expression, host("11.4", "470.82.01", {gpu(8, 6, "NVIDIA RTX")})));
  CHECK_FALSE(accepts(expression, host("11.4", "470.82.01", {gpu(8, 6, "GRID")})));
  CHECK(unsatisfied_condition(expression, host("11.6", "510.47.03", {gpu(8, 0)})) ==
        "unsatisfied condition: cuda>=11.8");
  // With no GPU visible, brand terms hold; a missing fact holds too.
  CHECK(accepts(expression, host("11.4", "470.82.01", {})));
  CHECK(accepts(expression, RequireHost{}));
}

TEST_CASE("evaluation of NVIDIA's 12.6.3 image requirement, per GPU") {
  const auto expression = parse(require_cuda_12_6_3());
  CHECK(accepts(expression, host("12.4", "550.54.15", {gpu(9, 0)})));
  CHECK(accepts(expression, host("12.2", "535.104.05", {gpu(8, 0, "Tesla"), gpu(8, 0, "NVIDIA")})));
  CHECK_FALSE(accepts(expression, host("12.3", "545.23.08", {gpu(9, 0)})));
  CHECK_FALSE(accepts(expression, host("12.2", "535.104.05", {gpu(8, 0, "Tesla"), gpu(8, 9, "GeForce")})));
  CHECK(accepts(expression, host("12.6", "560.35.03", {gpu(8, 9, "GeForce")})));
}

TEST_CASE("versions compare numerically, trailing zeros ignored, case-insensitive keys") {
  CHECK(accepts(parse("cuda>=12.9"), host("12.10", "600", {})));
  CHECK(accepts(parse("driver>=535,driver<536"), host("12.2", "535.104.05", {})));
  CHECK_FALSE(accepts(parse("driver>=535,driver<536"), host("12.4", "536.1", {})));
  CHECK(accepts(parse("CUDA>=12"), host("12.0", "525.60.13", {})));
  CHECK(accepts(parse("arch=9"), host("12.0", "525.60.13", {gpu(9, 0)})));
  CHECK(accepts(parse("arch!=9.0"), host("12.0", "525.60.13", {gpu(8, 0)})));
  CHECK(accepts(parse("cuda>=12.0  ,driver>=525,"), host("12.0", "525.60.13", {})));
  CHECK(accepts(parse("brand!=geforce"), host("12.0", "525.60.13", {gpu(8, 0, "Tesla")})));
  CHECK(parse("").alternatives.empty());
}

TEST_CASE("invalid requirements are refused with the offending term") {
  CHECK(parse_error("cuda==12.0") == "failed to parse requirement 'cuda==12.0': invalid operator in 'cuda==12.0'");
  CHECK(parse_error("cuda>=12.0 cudaa>=12") ==
        "failed to parse requirement 'cuda>=12.0 cudaa>=12': unknown key 'cudaa' in 'cudaa>=12' (did you mean "
        "cuda?)");
  CHECK(parse_error("brand>=tesla") == "failed to parse requirement 'brand>=tesla': brand takes only = or != in "
                                       "'brand>=tesla'");
  CHECK(parse_error("cuda>=12.x") ==
        "failed to parse requirement 'cuda>=12.x': '12.x' is not a version (digits and dots) in 'cuda>=12.x'");
  CHECK(parse_error("cuda") == "failed to parse requirement 'cuda': 'cuda' has no operator (=, !=, <, <=, >, >=)");
  CHECK(parse_error("arch>=") == "failed to parse requirement 'arch>=': invalid value in 'arch>='");
}

TEST_CASE("the requirement a variant carries") {
  const std::vector targets{*parse_gpu_target("sm_80"), *parse_gpu_target("sm_90"), *parse_gpu_target("sm_90a"),
                            *parse_gpu_target("sm_120"), *parse_gpu_target("compute_120")};
  CHECK(nvidia_require_cuda({13, 0}, targets) ==
        "cuda>=13.0,arch>=8.0,arch<9.0 cuda>=13.0,arch>=9.0,arch<10.0 cuda>=13.0,arch>=12.0 "
        "driver>=580,arch>=8.0,arch<9.0 driver>=580,arch>=9.0,arch<10.0 driver>=580,arch>=12.0,arch<13.0");
  CHECK(nvidia_require_cuda({12, 8}, std::vector{*parse_gpu_target("sm_100f")}) ==
        "cuda>=12.8,arch=10.0 cuda>=12.8,arch=10.3 cuda>=12.8,arch=10.7 "
        "driver>=525,arch=10.0 driver>=525,arch=10.3 driver>=525,arch=10.7");
  CHECK(nvidia_require_cuda({11, 8}, std::vector{*parse_gpu_target("compute_80")}) == "cuda>=11.8,arch>=8.0");
  CHECK(nvidia_require_cuda({12, 8}, {}).empty());
}

TEST_CASE("the generated requirement accepts exactly the single-GPU hosts section 5 accepts") {
  const std::vector<std::vector<std::string>> target_sets{
      {"sm_80", "sm_90", "sm_90a", "sm_120", "compute_120"}, {"sm_75", "compute_75"}, {"sm_100f", "compute_100"},
      {"sm_86"}, {"compute_90a"}};
  const std::vector<ComputeCapability> devices{{7, 0}, {7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0},
                                               {10, 3}, {11, 0}, {12, 0}, {12, 1}};
  const std::vector<int> branches{450, 470, 520, 525, 535, 550, 565, 570, 575, 580, 590, 595, 610};
  for (const auto toolkit : {CudaVersion{11, 8}, CudaVersion{12, 4}, CudaVersion{12, 8}, CudaVersion{13, 0}}) {
    for (const auto& names : target_sets) {
      std::vector<GpuTarget> targets;
      for (const auto& name : names) {
        targets.push_back(*parse_gpu_target(name));
      }
      const auto expression = parse(nvidia_require_cuda(toolkit, targets));
      for (const int branch : branches) {
        for (const auto* build : {"10.01", "90.07"}) {
          const auto driver = *DriverVersion::parse(fmt::format("{}.{}", branch, build));
          const auto host_cuda = *cuda_version_of_driver(driver);
          for (const auto device : devices) {
            const auto serving = best_serving(targets, device);
            const auto compat = cuda_compatibility(toolkit, host_cuda, driver);
            const bool section5 = (compat == CudaCompatibility::native && serving.serves()) ||
                                  (compat == CudaCompatibility::minor_version && serving.by_sass());
            const RequireHost facts{host_cuda, driver, {{device, "NVIDIA"}}};
            INFO(toolkit.str(), " ", hwimg::util::join(names, ","), " driver ", driver.str(), " cc ", device.str());
            CHECK(accepts(expression, facts) == section5);
          }
        }
      }
    }
  }
}
