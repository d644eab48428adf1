// The builder's check that a variant's programs are for its architecture (docs/recipe.md#cpu-code):
// ELF executables and shared objects of another machine or class in its own or shared layers are
// refused naming the file, its machine and the layer; relocatable objects, device code (EM_CUDA),
// links and files that are not ELF are left alone.
#include <doctest/doctest.h>

#include <filesystem>

#include "hwimg/build/architecture_check.hpp"
#include "hwimg/hw/elf_machine.hpp"
#include "hwimg/matrix/variant.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

// The first bytes of an ELF file: class (1 or 2), little-endian, e_type, e_machine, then padding.
std::string elf_head(unsigned elf_class, std::uint16_t type, std::uint16_t machine) {
  std::string bytes = {'\x7f', 'E', 'L', 'F', static_cast<char>(elf_class), '\x01', '\x01'};
  bytes.resize(16, '\0');
  for (const auto value : {type, machine}) {
    bytes.push_back(static_cast<char>(value & 0xff));
    bytes.push_back(static_cast<char>(value >> 8));
  }
  bytes.resize(64, '\0');
  return bytes;
}

matrix::Variant variant_for(std::string architecture) {
  matrix::Variant variant;
  variant.id = architecture == "arm64" ? "cpu-neoverse_v2" : "cpu-x86-64-v3";
  variant.platform = {"linux", std::move(architecture), ""};
  return variant;
}

build::VariantPlan plan_for(const matrix::Variant& variant, std::vector<build::LayerPlan> layers) {
  build::VariantPlan plan;
  plan.variant = &variant;
  plan.layers = std::move(layers);
  return plan;
}

build::LayerPlan layer(const fs::path& from, std::string to, bool own) {
  build::LayerPlan plan;
  plan.from = from;
  plan.to = std::move(to);
  plan.variant_specific = own;
  return plan;
}

}  // namespace

TEST_CASE("ELF identity: class, type and machine in either byte order; not ELF: nothing") {
  const auto head = elf_head(2, 3, hw::elf_machine_aarch64);
  const auto identity = hw::read_elf_identity(std::as_bytes(std::span(head.data(), head.size())));
  REQUIRE(identity.has_value());
  CHECK(identity->elf_class == hw::ElfClass::elf64);
  CHECK(identity->machine == hw::elf_machine_aarch64);
  CHECK(identity->is_loadable());
  auto big = head;
  big[5] = '\x02';
  std::swap(big[18], big[19]);
  CHECK(hw::read_elf_identity(std::as_bytes(std::span(big.data(), big.size())))->machine == hw::elf_machine_aarch64);
  const std::string text = "#!/bin/sh\necho not an ELF file at all\n";
  CHECK_FALSE(hw::read_elf_identity(std::as_bytes(std::span(text.data(), text.size()))));
  CHECK(hw::elf_machine_name(62) == "x86-64 (EM_X86_64)");
  CHECK(hw::elf_machine_name(9999) == "machine 9999");
  CHECK(hw::elf_machine_of("arm64") == hw::elf_machine_aarch64);
  CHECK_FALSE(hw::elf_machine_of("riscv64"));
}

TEST_CASE("an arm64 variant holding an x86-64 program is refused naming it; device code and objects are not") {
  const auto dir = test::scratch_directory();
  const auto own = dir.path() / "out" / "bin";
  test::write_file(own / "tool", elf_head(2, 3, hw::elf_machine_x86_64));
  test::write_file(own / "kernels.cubin", elf_head(2, 2, 190));       // EM_CUDA: the device-code check's
  test::write_file(own / "part.o", elf_head(2, 1, hw::elf_machine_x86_64));  // relocatable: never run
  test::write_file(own / "run.sh", "#!/bin/sh\n");
  fs::create_symlink("/usr/bin/x86_64-linux-gnu-gcc", own / "link");
  const auto arm = variant_for("arm64");
  const auto refused = build::check_architecture(plan_for(arm, {layer(own, "/opt/app/bin", true)}));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message ==
        "failed to check the CPU code of variant cpu-neoverse_v2 (linux/arm64): its programs and libraries must be "
        "64-bit AArch64 (EM_AARCH64) ELF, but /opt/app/bin/tool is a 64-bit x86-64 (EM_X86_64) shared object or "
        "PIE executable (its own layer, from " + (own / "tool").string() + ")");
  const auto amd = variant_for("amd64");
  CHECK(build::check_architecture(plan_for(amd, {layer(own, "/opt/app/bin", true)})));
}

TEST_CASE("a 32-bit program in an amd64 variant is refused, also from a shared layer or a single file") {
  const auto dir = test::scratch_directory();
  test::write_file(dir.path() / "shared" / "lib" / "libold.so", elf_head(1, 3, hw::elf_machine_386));
  test::write_file(dir.path() / "one", elf_head(2, 2, hw::elf_machine_aarch64));
  const auto amd = variant_for("amd64");
  const auto refused = build::check_architecture(
      plan_for(amd, {layer(dir.path() / "shared", "/usr/", false), layer(dir.path() / "one", "/bin/one", true)}));
  REQUIRE_FALSE(refused);
  const auto& message = refused.error().message;
  CHECK(message.find("/usr/lib/libold.so is a 32-bit i386 (EM_386) shared object or PIE executable (a layer every "
                     "variant shares, from ") != std::string::npos);
  CHECK(message.find("; /bin/one is a 64-bit AArch64 (EM_AARCH64) executable (its own layer") != std::string::npos);
}
