// The builder's check of a variant's x86-64 instructions against its CPU label
// (docs/recipe.md#cpu-code): AVX2 in a v2 variant's own layer is refused naming the file, the
// function, the instruction and the feature; in a shared layer it is a warning; target_clones
// versions are accepted; a GNU ISA-needed note above the level is refused; verify.cpu: off skips.
#include <doctest/doctest.h>

#include "hwimg/build/cpu_code_check.hpp"
#include "hwimg/matrix/variant.hpp"
#include "x86_test_programs.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

matrix::Variant variant_at(std::string level) {
  matrix::Variant variant;
  variant.id = "cpu-" + level;
  variant.cpu_level = std::move(level);
  variant.platform = {"linux", "amd64", ""};
  return variant;
}

build::VariantPlan plan_for(const matrix::Variant& variant, const fs::path& from, bool own) {
  build::VariantPlan plan;
  plan.variant = &variant;
  build::LayerPlan layer;
  layer.from = from;
  layer.to = "/opt/app";
  layer.variant_specific = own;
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

TEST_CASE("cpu code: AVX2 in a v2 variant is refused naming file, function, instruction and feature; v3 builds") {
  const auto dir = test::scratch_directory();
  test::compile_c(dir.path() / "bin" / "app", test::x86_add_loop, "-O3 -march=x86-64-v3");
  const auto v2 = variant_at("x86-64-v2");
  test::WarningLog output;
  const auto refused = check_cpu_code(plan_for(v2, dir.path() / "bin", true), output);
  REQUIRE_FALSE(refused.has_value());
  const auto& message = refused.error().message;
  CHECK(message.starts_with("failed to check the CPU code of variant cpu-x86-64-v2: it is labelled x86-64-v2, but "
                            "/opt/app/app: function add_ints needs avx"));
  CHECK(message.find("avx2 (v") != std::string::npos);  // a VEX mnemonic: vpaddd, vpmulld, ...
  CHECK(message.find("verify.cpu: strict") != std::string::npos);

  const auto v3 = variant_at("x86-64-v3");
  CHECK(check_cpu_code(plan_for(v3, dir.path() / "bin", true), output).has_value());
  // A named target is held to its own features: haswell has AVX2.
  auto haswell = variant_at("x86-64-v3");
  haswell.cpu_target = "haswell";
  CHECK(check_cpu_code(plan_for(haswell, dir.path() / "bin", true), output).has_value());
}

TEST_CASE("cpu code: a shared layer warns, verify.cpu off skips, strict refuses shared layers too") {
  const auto dir = test::scratch_directory();
  test::compile_c(dir.path() / "bin" / "app", test::x86_add_loop, "-O3 -mavx2");
  const auto v1 = variant_at("x86-64-v1");
  test::WarningLog output;
  auto shared = plan_for(v1, dir.path() / "bin", false);
  CHECK(check_cpu_code(shared, output).has_value());
  REQUIRE(output.lines.size() == 1);
  CHECK(output.lines[0].starts_with("variant cpu-x86-64-v1 is labelled x86-64-v1, but /opt/app/app: function "
                                       "add_ints needs avx"));
  shared.verify_cpu = recipe::CpuVerify::strict;
  CHECK_FALSE(check_cpu_code(shared, output).has_value());
  auto own = plan_for(v1, dir.path() / "bin", true);
  own.verify_cpu = recipe::CpuVerify::off;
  output.lines.clear();
  CHECK(check_cpu_code(own, output).has_value());
  CHECK(output.lines.empty());
}

TEST_CASE("cpu code: a v1 variant holding a target_clones library is accepted and reports it as dispatched") {
  const auto dir = test::scratch_directory();
  test::compile_c(dir.path() / "lib" / "libclones.so", test::x86_clones, "-O3 -fPIC -shared");
  const auto v1 = variant_at("x86-64-v1");
  test::WarningLog output;
  const auto accepted = check_cpu_code(plan_for(v1, dir.path() / "lib", true), output);
  REQUIRE_MESSAGE(accepted.has_value(), accepted.error().message);
  REQUIRE(output.progress_lines.size() == 1);
  CHECK(output.progress_lines[0].find("/opt/app/libclones.so: function add_ints.avx2 needs avx") != std::string::npos);
  CHECK(output.progress_lines[0].find("target_clones/target version") != std::string::npos);
}

TEST_CASE("cpu code: a binary whose GNU property note needs x86-64-v3 is refused in a v2 variant") {
  const auto dir = test::scratch_directory();
  // -mneeded with a v1 body: only the note is above the level.
  test::compile_c(dir.path() / "bin" / "app", "int main(void) { return 0; }\n", "-O2 -march=x86-64-v3 -mneeded");
  const auto v2 = variant_at("x86-64-v2");
  test::WarningLog output;
  const auto refused = check_cpu_code(plan_for(v2, dir.path() / "bin", true), output);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("/opt/app/app says in its GNU property note (GNU_PROPERTY_X86_ISA_1_NEEDED) "
                                     "that it needs x86-64-v3") != std::string::npos);
  CHECK(check_cpu_code(plan_for(variant_at("x86-64-v3"), dir.path() / "bin", true), output).has_value());
}

TEST_CASE("cpu code: runtime libraries that pick their code by CPUID (glibc, libstdc++, OpenSSL) are dispatched, "
          "stripped or not; the same code under another name is refused") {
  const auto dir = test::scratch_directory();
  // What a bundled, stripped libstdc++ holds: AVX2 code only reached after its own CPUID check.
  test::compile_c(dir.path() / "runtime" / "libstdc++.so.6", test::x86_add_loop, "-O3 -mavx2 -fPIC -shared -s");
  test::compile_c(dir.path() / "other" / "libmine.so", test::x86_add_loop, "-O3 -mavx2 -fPIC -shared -s");
  const auto v1 = variant_at("x86-64-v1");
  test::WarningLog output;
  const auto accepted = check_cpu_code(plan_for(v1, dir.path() / "runtime", true), output);
  REQUIRE_MESSAGE(accepted.has_value(), accepted.error().message);
  REQUIRE(output.progress_lines.size() == 1);
  CHECK(output.progress_lines[0].find("/opt/app/libstdc++.so.6: function add_ints needs avx") != std::string::npos);
  CHECK(output.progress_lines[0].find("in a runtime library that selects its code by CPUID") != std::string::npos);
  const auto refused = check_cpu_code(plan_for(v1, dir.path() / "other", true), output);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("/opt/app/libmine.so: function add_ints needs avx") != std::string::npos);
}
