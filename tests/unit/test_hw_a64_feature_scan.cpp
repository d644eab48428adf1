// The A64 instruction scan (docs/compatibility.md#instruction-sets-arm64) on the fixtures of
// tests/data/a64 (sve.s, assembled by make_fixtures.sh): SVE attributed to its function, a literal
// after a `$d` mapping symbol not taken for an instruction, an IFUNC's SVE version dispatched, also
// when stripped.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "hwimg/hw/a64_feature_scan.hpp"
#include "hwimg/util/files.hpp"

using namespace hwimg;

namespace {

const std::filesystem::path fixtures = std::filesystem::path(HWIMG_TEST_DATA_DIR) / "a64";

std::string fixture_bytes(std::string_view name) {
  auto bytes = util::read_file(fixtures / name);
  REQUIRE(bytes.has_value());
  return std::move(*bytes);
}

hw::CodeScan scan_fixture(std::string_view name) {
  const auto bytes = fixture_bytes(name);
  auto scan = hw::scan_a64_features(std::as_bytes(std::span(bytes)), name);
  REQUIRE_MESSAGE(scan.has_value(), scan.error().message);
  return std::move(*scan);
}

const hw::FunctionUse* find_function(const hw::CodeScan& scan, std::string_view name) {
  const auto it = std::ranges::find(scan.functions, name, &hw::FunctionUse::name);
  return it == scan.functions.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("a64 scan: SVE is reported in its function, at its first SVE instruction, not dispatched") {
  const auto scan = scan_fixture("sve.so");
  const auto* vector_add = find_function(scan, "vector_add");
  REQUIRE(vector_add != nullptr);
  CHECK(vector_add->dispatch == hw::CodeDispatch::none);
  REQUIRE(vector_add->uses.size() == 1);
  const auto& use = vector_add->uses[0];
  CHECK(use.address == vector_add->address);  // ptrue p0.s
  CHECK(use.mnemonic == "SVE instruction 0x2598e3e0");
  CHECK(use.features == std::vector<std::string_view>{"sve"});
  CHECK(scan.bytes == 76);  // .text: 19 words, one of them plain's literal
}

TEST_CASE("a64 scan: a literal after a $d mapping symbol is data, even when it reads as SVE") {
  const auto scan = scan_fixture("sve.so");
  CHECK(find_function(scan, "plain") == nullptr);
  // Stripped, the mapping symbols are gone and the literal is taken for `add z0.s, z0.s, z0.s`.
  const auto stripped = scan_fixture("sve-stripped.so");
  const auto* plain = find_function(stripped, "plain");
  REQUIRE(plain != nullptr);
  REQUIRE(plain->uses.size() == 1);
  CHECK(plain->uses[0].mnemonic == "SVE instruction 0x04a00000");
}

TEST_CASE("a64 scan: an IFUNC resolver's SVE version is dispatched, by name and when stripped") {
  const auto scan = scan_fixture("sve.so");
  const auto* count_sve = find_function(scan, "count_sve");
  REQUIRE(count_sve != nullptr);
  CHECK(count_sve->dispatch == hw::CodeDispatch::ifunc_target);
  CHECK(find_function(scan, "count") == nullptr);  // the resolver: ADRP, ADD, TBNZ

  const auto stripped = scan_fixture("sve-stripped.so");
  const auto* unnamed = find_function(stripped, "code at 0x1ec");
  REQUIRE(unnamed != nullptr);
  CHECK(unnamed->address == count_sve->address);
  CHECK(unnamed->dispatch == hw::CodeDispatch::ifunc_target);
  const auto* vector_add = find_function(stripped, "vector_add");  // .dynsym keeps it
  REQUIRE(vector_add != nullptr);
  CHECK(vector_add->dispatch == hw::CodeDispatch::none);
}

TEST_CASE("a64 scan: an x86-64 program or a cut file is refused with the reason") {
  const auto self = util::read_file("/proc/self/exe");
  REQUIRE(self.has_value());
  const auto x86 = hw::scan_a64_features(std::as_bytes(std::span(*self)), "hwimg_unit_tests");
  REQUIRE_FALSE(x86.has_value());
  CHECK(x86.error().message ==
        "failed to scan the instructions of hwimg_unit_tests: it is for x86-64 (EM_X86_64), not AArch64");

  const auto bytes = fixture_bytes("sve.so");
  for (const auto size : {std::size_t{0}, std::size_t{16}, std::size_t{64}, bytes.size() / 2, bytes.size() - 1}) {
    const auto cut = hw::scan_a64_features(std::as_bytes(std::span(bytes.data(), size)), "cut.so");
    CHECK_MESSAGE(!cut.has_value(), size);
  }
}
