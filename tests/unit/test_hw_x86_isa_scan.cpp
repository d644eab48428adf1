// The x86-64 instruction scan (docs/compatibility.md#instruction-sets): what each function of a
// program GCC built needs, which code is dispatched, and the GNU ISA-needed note.
#include <doctest/doctest.h>

#include <algorithm>

#include "hwimg/hw/elf.hpp"
#include "hwimg/hw/x86_isa_scan.hpp"
#include "hwimg/util/files.hpp"
#include "x86_test_programs.hpp"

using namespace hwimg;

namespace {

hw::CodeScan scan_file(const std::filesystem::path& path) {
  const auto bytes = util::read_file(path);
  REQUIRE(bytes.has_value());
  auto scan = hw::scan_x86_isa(std::as_bytes(std::span(*bytes)), path.filename().string());
  REQUIRE_MESSAGE(scan.has_value(), scan.error().message);
  return std::move(*scan);
}

bool needs(const hw::FunctionUse& function, std::string_view feature) {
  return std::ranges::any_of(function.uses, [&](const auto& use) {
    return std::ranges::find(use.features, feature) != use.features.end();
  });
}

const hw::FunctionUse* find_function(const hw::CodeScan& scan, std::string_view name) {
  const auto it = std::ranges::find(scan.functions, name, &hw::FunctionUse::name);
  return it == scan.functions.end() ? nullptr : &*it;
}
// A pointer into a temporary scan would dangle.
const hw::FunctionUse* find_function(hw::CodeScan&& scan, std::string_view name) = delete;

}  // namespace

TEST_CASE("x86 scan: a loop built with -mavx2 needs avx2 in its function, which is not dispatched") {
  const auto dir = test::scratch_directory();
  test::compile_c(dir.path() / "v3", test::x86_add_loop, "-O3 -mavx2");
  test::compile_c(dir.path() / "v1", test::x86_add_loop, "-O3 -march=x86-64");
  const auto v3 = scan_file(dir.path() / "v3");
  const auto* add = find_function(v3, "add_ints");
  REQUIRE(add != nullptr);
  CHECK(needs(*add, "avx2"));
  CHECK(add->dispatch == hw::CodeDispatch::none);
  const auto avx2 = std::ranges::find_if(add->uses, [](const auto& use) { return use.features[0] == "avx2"; });
  REQUIRE(avx2 != add->uses.end());
  CHECK(avx2->address >= add->address);
  CHECK_FALSE(avx2->mnemonic.empty());
  CHECK(v3.bytes > 0);
  const auto v1 = scan_file(dir.path() / "v1");
  for (const auto& function : v1.functions) {
    CHECK_MESSAGE(!needs(function, "avx2"), function.name);
    CHECK_MESSAGE(!needs(function, "avx"), function.name);
  }
}

TEST_CASE("x86 scan: target_clones versions and IFUNC targets are dispatched, also when stripped") {
  const auto dir = test::scratch_directory();
  test::compile_c(dir.path() / "libclones.so", test::x86_clones, "-O3 -fPIC -shared");
  const auto scan = scan_file(dir.path() / "libclones.so");
  const auto* avx2 = find_function(scan, "add_ints.avx2");
  REQUIRE(avx2 != nullptr);
  CHECK(needs(*avx2, "avx2"));
  CHECK(hw::is_dispatched(avx2->dispatch));
  // libgcc's CPU detection (XGETBV after CPUID) needs nothing.
  for (const auto& function : scan.functions) CHECK_MESSAGE(!needs(function, "xsave"), function.name);

  // Stripped: the clones lose their names; the resolver's LEAs still find them.
  REQUIRE(std::system(fmt::format("strip --strip-all '{}'", (dir.path() / "libclones.so").string()).c_str()) == 0);
  const auto stripped = scan_file(dir.path() / "libclones.so");
  bool found = false;
  for (const auto& function : stripped.functions) {
    if (!needs(function, "avx2")) continue;
    found = true;
    CHECK(function.name.starts_with("code at 0x"));
    CHECK(function.dispatch == hw::CodeDispatch::ifunc_target);
  }
  CHECK(found);
}

TEST_CASE("x86 scan: a function only called after __builtin_cpu_supports is dispatched, naming the caller") {
  const auto dir = test::scratch_directory();
  // PIE (a RIP-relative read of __cpu_model), static (`mov $__cpu_model`), PIE without linker
  // relaxation (its address from a GOT slot), shared object (run_avx2 static, work exported).
  for (const std::string flags : {"-O3 -fPIE -pie", "-O3 -static", "-O3 -fPIE -pie -Wl,--no-relax", "-O3 -fPIC -shared"}) {
    CAPTURE(flags);
    test::compile_c(dir.path() / "prog", test::x86_cpu_supports, flags);
    const auto scan = scan_file(dir.path() / "prog");
    const auto* avx2 = find_function(scan, "run_avx2");
    REQUIRE(avx2 != nullptr);
    CHECK(needs(*avx2, "avx2"));
    CHECK(avx2->dispatch == hw::CodeDispatch::after_cpu_check);
    CHECK(avx2->dispatched_by == "work");
    CHECK(hw::dispatch_name(avx2->dispatch, avx2->dispatched_by) == "only reached after a CPU check in work");
  }
}

TEST_CASE("x86 scan: a function also called without a CPU check, exported, or only referenced from data is not dispatched") {
  const auto dir = test::scratch_directory();
  test::compile_c(dir.path() / "prog", test::x86_cpu_supports_and_unchecked_call, "-O3");
  const auto unchecked = scan_file(dir.path() / "prog");
  const auto* avx2 = find_function(unchecked, "run_avx2");
  REQUIRE(avx2 != nullptr);
  CHECK(avx2->dispatch == hw::CodeDispatch::none);
  CHECK(avx2->dispatched_by.empty());
  // Not static and exported (-rdynamic): a plugin may call it unchecked. In an executable the call
  // is direct, so only the export tells.
  test::compile_c(dir.path() / "exported", test::x86_cpu_supports, "-O3 -fPIE -pie -rdynamic -Dstatic=");
  const auto exported_scan = scan_file(dir.path() / "exported");
  const auto* exported = find_function(exported_scan, "run_avx2");
  REQUIRE(exported != nullptr);
  CHECK(exported->dispatch == hw::CodeDispatch::none);
  // Its callers are indirect calls through a pointer in data, which the scan does not follow.
  test::compile_c(dir.path() / "table", test::x86_cpu_supports_through_table, "-O3");
  const auto table_scan = scan_file(dir.path() / "table");
  const auto* from_data = find_function(table_scan, "run_avx2");
  REQUIRE(from_data != nullptr);
  CHECK(from_data->dispatch == hw::CodeDispatch::none);
}

TEST_CASE("x86 scan: AVX2 after a function's own cpuid is dispatched, before it is not, also when stripped") {
  const auto dir = test::scratch_directory();
  for (const std::string flags : {"-O2 -fPIC -shared", "-O2 -fPIC -shared -s"}) {
    CAPTURE(flags);
    test::compile_c(dir.path() / "lib.so", test::x86_inline_cpuid, flags);
    const auto scan = scan_file(dir.path() / "lib.so");
    const auto* checked = find_function(scan, "checked");
    REQUIRE(checked != nullptr);
    CHECK(needs(*checked, "avx2"));
    CHECK(checked->dispatch == hw::CodeDispatch::own_cpu_check);
    CHECK(checked->dispatched_by == "checked");
    const auto* unchecked = find_function(scan, "unchecked");
    REQUIRE(unchecked != nullptr);
    CHECK(needs(*unchecked, "avx2"));
    CHECK(unchecked->dispatch == hw::CodeDispatch::none);
  }
}

TEST_CASE("x86 scan: -mneeded writes the ISA level into the GNU property note; without it the note says baseline") {
  const auto dir = test::scratch_directory();
  test::compile_c(dir.path() / "needed", test::x86_add_loop, "-O3 -march=x86-64-v3 -mneeded");
  test::compile_c(dir.path() / "plain", test::x86_add_loop, "-O3 -march=x86-64-v3");
  CHECK(scan_file(dir.path() / "needed").needed_level == hw::X86Level::v3);
  const auto plain = scan_file(dir.path() / "plain").needed_level;
  CHECK((!plain || *plain == hw::X86Level::v1));
}

TEST_CASE("x86 scan: a file for another machine or a truncated one is refused with its name") {
  const auto dir = test::scratch_directory();
  test::compile_c(dir.path() / "prog", test::x86_add_loop, "-O2");
  auto bytes = util::read_file(dir.path() / "prog");
  REQUIRE(bytes.has_value());
  auto other = *bytes;
  other[18] = '\xb7';  // EM_AARCH64
  other[19] = '\0';
  const auto arm = hw::scan_x86_isa(std::as_bytes(std::span(other)), "prog");
  REQUIRE_FALSE(arm.has_value());
  CHECK(arm.error().message.find("not x86-64") != std::string::npos);
  const auto cut = hw::scan_x86_isa(std::as_bytes(std::span(*bytes).first(200)), "prog");
  REQUIRE_FALSE(cut.has_value());
  CHECK(cut.error().message.starts_with("failed to read ELF file prog"));
}

TEST_CASE("x86 scan: a relocation section with the wrong entry size or a symbol beyond its table is refused") {
  const auto dir = test::scratch_directory();
  test::compile_c(dir.path() / "prog", test::x86_cpu_supports, "-O2 -fPIE -pie");
  const auto bytes = util::read_file(dir.path() / "prog");
  REQUIRE(bytes.has_value());
  const auto sections = hw::read_elf_sections(std::as_bytes(std::span(*bytes)), "prog");
  REQUIRE(sections.has_value());
  const auto rela = std::ranges::find(*sections, std::string(".rela.dyn"), &hw::ElfSection::name);
  REQUIRE(rela != sections->end());
  const auto header = hw::read_le<std::uint64_t>(std::as_bytes(std::span(*bytes)), 40) +
                      static_cast<std::uint64_t>(rela - sections->begin()) * 64;

  auto wrong_size = *bytes;
  wrong_size[header + 56] = 16;  // sh_entsize
  const auto sized = hw::scan_x86_isa(std::as_bytes(std::span(wrong_size)), "prog");
  REQUIRE_FALSE(sized.has_value());
  CHECK(sized.error().message == "failed to read ELF file prog: relocation section .rela.dyn has entries of 16 bytes, not 24");

  auto far_symbol = *bytes;
  far_symbol[rela->offset + 8 + 6] = '\x7f';  // the first entry's r_info symbol index, high bytes
  const auto named = hw::scan_x86_isa(std::as_bytes(std::span(far_symbol)), "prog");
  REQUIRE_FALSE(named.has_value());
  CHECK(named.error().message.find("names symbol") != std::string::npos);
}

TEST_CASE("x86 isa scan: code decoded in chunks on a thread pool gives what one thread gives") {
  // This machine's libc and libstdc++: megabytes of hand-written and compiled code, IFUNC targets
  // and gaps between symbols; 8 KiB chunks put hundreds of chunk edges mid-instruction.
  util::ThreadPool pool(3);
  for (const auto* path : {"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}) {
    CAPTURE(path);
    const auto bytes = util::read_file(path);
    REQUIRE(bytes.has_value());
    const auto data = std::as_bytes(std::span(bytes->data(), bytes->size()));
    const auto alone = hw::scan_x86_isa(data, path);
    const auto chunked = hw::scan_x86_isa(data, path, {&pool, 8192});
    REQUIRE(alone.has_value());
    REQUIRE(chunked.has_value());
    CHECK(chunked->bytes == alone->bytes);
    REQUIRE(chunked->functions.size() == alone->functions.size());
    for (std::size_t i = 0; i < alone->functions.size(); ++i) {
      const auto& a = alone->functions[i];
      const auto& c = chunked->functions[i];
      CAPTURE(a.name);
      CHECK(c.name == a.name);
      CHECK(c.dispatch == a.dispatch);
      CHECK(c.dispatched_by == a.dispatched_by);
      REQUIRE(c.uses.size() == a.uses.size());
      for (std::size_t j = 0; j < a.uses.size(); ++j) {
        CHECK(c.uses[j].address == a.uses[j].address);
        CHECK(c.uses[j].mnemonic == a.uses[j].mnemonic);
      }
    }
  }
}

TEST_CASE("x86 isa scan: a stripped static program's glibc string functions are IFUNC targets, by IRELATIVE") {
  // glibc's AVX2/EVEX memcpy and strlen are linked into every static program and chosen by IFUNC
  // resolvers that R_X86_64_IRELATIVE relocations name; stripped, nothing else tells them apart.
  const auto dir = test::scratch_directory();
  test::compile_c(dir.path() / "app",
                  "#include <string.h>\n#include <stdio.h>\n"
                  "int main(int argc, char** argv) { char b[64]; memcpy(b, argv[0], 8); b[8] = 0; return (int)strlen(b) + argc; }\n",
                  "-O2 -static -s");
  const auto scan = scan_file(dir.path() / "app");
  std::size_t ifunc_targets = 0;
  for (const auto& function : scan.functions) {
    if (function.dispatch == hw::CodeDispatch::ifunc_target) ++ifunc_targets;
    if (function.dispatch != hw::CodeDispatch::none) continue;
    CHECK_MESSAGE(!needs(function, "avx2"), function.name);
    CHECK_MESSAGE(!needs(function, "avx512f"), function.name);
  }
  CHECK(ifunc_targets > 10);
}
