// A layer's code needs, kept and judged (docs/recipe.md#cpu-code): the cache's JSON reads back
// what was written and refuses anything else (another scanner version, a mistyped field); the
// level a set of features needs; a label's verdict on a program for another machine, on a GNU
// ISA-needed note above the level, on dispatched code and on code beyond the label.
#include <doctest/doctest.h>

#include "hwimg/verify/image_verify.hpp"
#include "hwimg/verify/judge.hpp"
#include "hwimg/verify/needs_cache.hpp"
#include "test_support.hpp"

using namespace hwimg;

namespace {

verify::LayerNeeds sample_needs() {
  verify::FileNeeds program{"/opt/app/bin/app", {hw::ElfClass::elf64, 3, hw::elf_machine_x86_64}, hw::X86Level::v3,
                            {}, {}, 4096};
  program.functions.push_back({"add_ints", hw::CodeDispatch::none, {}, {{"avx2", "vpaddd", 0x1139}, {"fma", "vfmadd231ps", 0x1150}}});
  program.functions.push_back({"add_ints.avx512f", hw::CodeDispatch::multiversion, {}, {{"avx512f", "vpaddd", 0x2000}}});
  program.functions.push_back({"run_avx2", hw::CodeDispatch::after_cpu_check, "work", {{"avx2", "vpaddd", 0x3000}}});
  verify::FileNeeds foreign{"/opt/app/bin/arm", {hw::ElfClass::elf64, 2, hw::elf_machine_aarch64}, std::nullopt, {}, {}, 0};
  return {{program, foreign}, {"/opt (user.overlay.origin)"}, 3};
}

}  // namespace

TEST_CASE("verify: needs read back as written; anything else counts as missing") {
  const auto needs = sample_needs();
  const auto text = verify::needs_to_json(needs);
  const auto back = verify::needs_from_json(text);
  REQUIRE(back.has_value());
  REQUIRE(back->files.size() == 2);
  CHECK(back->files[0].path == "/opt/app/bin/app");
  CHECK(back->files[0].needed_level == hw::X86Level::v3);
  CHECK(back->files[0].code_bytes == 4096);
  REQUIRE(back->files[0].functions.size() == 3);
  CHECK(back->files[0].functions[1].dispatch == hw::CodeDispatch::multiversion);
  CHECK(back->files[0].functions[2].dispatch == hw::CodeDispatch::after_cpu_check);
  CHECK(back->files[0].functions[2].dispatched_by == "work");
  CHECK(back->files[0].functions[0].uses[1].mnemonic == "vfmadd231ps");
  CHECK(back->files[1].identity.machine == hw::elf_machine_aarch64);
  CHECK(back->overlay_xattrs == std::vector<std::string>{"/opt (user.overlay.origin)"});
  CHECK(back->overlay_xattr_entries == 3);
  CHECK(verify::needs_to_json(*back) == text);

  CHECK_FALSE(verify::needs_from_json("").has_value());
  CHECK_FALSE(verify::needs_from_json("[]").has_value());
  // Each edit of what was written: another scanner version, a mistyped or out-of-range field.
  const std::pair<std::string, std::string> edits[] = {
      {"\"scanner\":5", "\"scanner\":0"},
      {"\"code_bytes\":4096", "\"code_bytes\":\"4k\""},
      {"\"overlay_xattr_entries\":3", "\"overlay_xattr_entries\":-3"},
      {"[\"/opt (user.overlay.origin)\"]", "[7]"},
      {"\"multiversion\"", "\"maybe\""},
  };
  for (const auto& [from, to] : edits) {
    CAPTURE(to);
    auto edited = text;
    REQUIRE(edited.find(from) != std::string::npos);
    edited.replace(edited.find(from), from.size(), to);
    CHECK_FALSE(verify::needs_from_json(edited).has_value());
  }
}

TEST_CASE("verify: the cache keeps needs by layer digest") {
  const auto dir = test::scratch_directory();
  const verify::NeedsCache cache(dir.path());
  const auto digest = oci::Digest::from_sha256_hex(std::string(64, 'a'));
  CHECK_FALSE(cache.load(digest).has_value());
  cache.store(digest, sample_needs());
  const auto kept = cache.load(digest);
  REQUIRE(kept.has_value());
  CHECK(kept->files.size() == 2);
  CHECK(cache.path(digest) == dir.path() / "code-needs" / "sha256" / (std::string(64, 'a') + ".json"));
}

TEST_CASE("verify: the lowest level that holds a set of features, and what no level has") {
  CHECK(verify::level_needs({}).level == hw::X86Level::v1);
  CHECK(verify::level_needs({"sse4_2", "popcnt"}).level == hw::X86Level::v2);
  const auto v3 = verify::level_needs({"avx2", "aes", "sse4_2"});
  CHECK(v3.level == hw::X86Level::v3);
  CHECK(v3.beyond_levels == std::vector<std::string>{"aes"});
  CHECK(verify::level_needs({"avx512bw"}).level == hw::X86Level::v4);
}

TEST_CASE("verify: a label's verdict names wrong machines, notes above the level and code beyond it") {
  const auto* v2 = hw::find_cpu_target("x86-64-v2");
  REQUIRE(v2 != nullptr);
  verify::Findings findings;
  verify::judge_layer(sample_needs(), verify::label_for(*v2, "amd64"), "its own layer", findings);
  CHECK(findings.programs == 2);
  REQUIRE(findings.uncovered.size() == 3);
  CHECK(findings.uncovered[0] == "/opt/app/bin/app says in its GNU property note (GNU_PROPERTY_X86_ISA_1_NEEDED) that it needs x86-64-v3");
  CHECK(findings.uncovered[1] == "/opt/app/bin/app: function add_ints needs avx2 (vpaddd at 0x1139), fma (vfmadd231ps at 0x1150)");
  CHECK(findings.uncovered[2].starts_with("/opt/app/bin/arm is a 64-bit AArch64 (EM_AARCH64) executable (its own layer)"));
  REQUIRE(findings.dispatched.size() == 2);
  CHECK(findings.dispatched[0].starts_with("/opt/app/bin/app: function add_ints.avx512f needs avx512f (vpaddd at 0x2000), "));
  CHECK(findings.dispatched[1] == "/opt/app/bin/app: function run_avx2 needs avx2 (vpaddd at 0x3000), only reached after a CPU check in work");
  CHECK(findings.needed == hw::FeatureSet{"avx2", "fma"});
  CHECK(findings.noted_level == hw::X86Level::v3);

  const auto* v4 = hw::find_cpu_target("x86-64-v4");
  verify::Findings on_v4;
  verify::judge_layer(sample_needs(), verify::label_for(*v4, "amd64"), "its own layer", on_v4);
  REQUIRE(on_v4.uncovered.size() == 1);  // only the arm64 program
  CHECK(on_v4.dispatched.empty());
}
