// The builder's check of an arm64 variant's instructions against its CPU target
// (docs/recipe.md#cpu-code): SVE in a neoverse_n1 variant is refused naming the file, the function,
// the instruction and "sve"; neoverse_v1 and neoverse_v2 have SVE; an IFUNC's SVE version is
// accepted as dispatched.
#include <doctest/doctest.h>

#include <filesystem>

#include "hwimg/build/cpu_code_check.hpp"
#include "hwimg/matrix/variant.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

matrix::Variant arm64_variant(std::string target) {
  matrix::Variant variant;
  variant.id = "cpu-" + target;
  variant.cpu_target = std::move(target);
  variant.platform = {"linux", "arm64", "v8"};
  return variant;
}

build::VariantPlan plan_holding(const matrix::Variant& variant, const fs::path& from) {
  build::VariantPlan plan;
  plan.variant = &variant;
  build::LayerPlan layer;
  layer.from = from;
  layer.to = "/opt/app";
  layer.variant_specific = true;
  plan.layers.push_back(layer);
  return plan;
}

// The check as a build of one variant without base layers runs it.
Result<void> check_cpu_code(const build::VariantPlan& plan, util::Output& output) {
  const auto cache = test::scratch_directory();
  build::CpuCodeCheck check(cache.path());
  return check.check(plan, build::BaseImage{}, {}, output);
}

}  // namespace

TEST_CASE("cpu code arm64: SVE in a neoverse_n1 variant is refused naming file, function, instruction, sve") {
  const auto dir = test::scratch_directory();
  fs::create_directories(dir.path() / "lib");
  fs::copy_file(fs::path(HWIMG_TEST_DATA_DIR) / "a64" / "sve.so", dir.path() / "lib" / "libsve.so");
  const auto n1 = arm64_variant("neoverse_n1");
  test::WarningLog output;
  const auto refused = check_cpu_code(plan_holding(n1, dir.path() / "lib"), output);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message ==
        "failed to check the CPU code of variant cpu-neoverse_n1: it is labelled neoverse_n1, but "
        "/opt/app/libsve.so: function vector_add needs sve (SVE instruction 0x2598e3e0 at 0x1d8) "
        "(verify.cpu: strict; docs/recipe.md#cpu-code)");

  for (const auto* target : {"neoverse_v1", "neoverse_v2"}) {
    const auto with_sve = arm64_variant(target);
    CHECK_MESSAGE(check_cpu_code(plan_holding(with_sve, dir.path() / "lib"), output).has_value(), target);
  }
}
