#include <doctest/doctest.h>

#include "hwimg/select/variant_filter.hpp"
#include "test_select_support.hpp"

using namespace hwimg;
using namespace select_test;

namespace {

std::vector<select::Candidate> fleet_image() {
  return {variant("v2", {{"cpu.level", "x86-64-v2"}}), variant("v4", {{"cpu.level", "x86-64-v4"}}),
          variant("gpu", {{"cpu.level", "x86-64-v2"}, {"cuda.version", "12.8"}, {"gpu.targets", "sm_90"}})};
}

}  // namespace

TEST_CASE("an empty filter keeps every variant") {
  CHECK(select::filter_variants(fleet_image(), {}).value() == std::vector<std::size_t>{0, 1, 2});
}

TEST_CASE("--variant keeps the named ones in index order") {
  CHECK(select::filter_variants(fleet_image(), {{"gpu", "v2"}, {}}).value() == std::vector<std::size_t>{0, 2});
}

TEST_CASE("an unknown variant is a usage error naming the nearest id") {
  const auto kept = select::filter_variants(fleet_image(), {{"v44"}, {}});
  REQUIRE_FALSE(kept);
  CHECK(kept.error().exit_code == ExitCode::usage);
  CHECK(kept.error().message.find("no variant \"v44\" (did you mean v4?); its variants: v2, v4, gpu") !=
        std::string::npos);
}

TEST_CASE("--for keeps every variant that runs on any of the hosts") {
  const select::VariantFilter cpu_only{{}, {{"old.json", cpu_host("x86-64-v3")}}};
  CHECK(select::filter_variants(fleet_image(), cpu_only).value() == std::vector<std::size_t>{0});
  const select::VariantFilter fleet{
      {}, {{"old.json", cpu_host("x86-64-v3")}, {"h100.json", with_gpus(cpu_host("x86-64-v4"), "580.65.06", "13.0", {"9.0"})}}};
  CHECK(select::filter_variants(fleet_image(), fleet).value() == std::vector<std::size_t>{0, 1, 2});
}

TEST_CASE("ids and hosts add up; a filter that keeps nothing names the hosts") {
  const select::VariantFilter both{{"v4"}, {{"old.json", cpu_host("x86-64-v3")}}};
  CHECK(select::filter_variants(fleet_image(), both).value() == std::vector<std::size_t>{0, 1});
  const auto none = select::filter_variants(fleet_image(), {{}, {{"arm.json", arm64_host()}}});
  REQUIRE_FALSE(none);
  CHECK(none.error().exit_code == ExitCode::failure);
  CHECK(none.error().message.find("none of the 3 variants runs on arm.json") != std::string::npos);
}
