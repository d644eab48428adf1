#include "hwimg/hw/elf_machine.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "hwimg/hw/elf.hpp"

namespace hwimg::hw {

namespace {

constexpr std::uint8_t little_endian = 1;  // ELFDATA2LSB
constexpr std::uint8_t big_endian = 2;     // ELFDATA2MSB

std::uint16_t read_u16(std::span<const std::byte> bytes, std::size_t offset, std::uint8_t data) {
  const auto first = static_cast<std::uint16_t>(bytes[offset]);
  const auto second = static_cast<std::uint16_t>(bytes[offset + 1]);
  return data == little_endian ? static_cast<std::uint16_t>(first | (second << 8))
                               : static_cast<std::uint16_t>((first << 8) | second);
}

}  // namespace

std::optional<ElfIdentity> read_elf_identity(std::span<const std::byte> head) {
  if (head.size() < elf_identity_size || !is_elf(head)) return std::nullopt;
  const auto elf_class = static_cast<std::uint8_t>(head[4]);
  const auto data = static_cast<std::uint8_t>(head[5]);
  if ((elf_class != 1 && elf_class != 2) || (data != little_endian && data != big_endian)) return std::nullopt;
  return ElfIdentity{static_cast<ElfClass>(elf_class), read_u16(head, 16, data), read_u16(head, 18, data)};
}

std::string elf_machine_name(std::uint16_t machine) {
  // The machines a container image plausibly holds (gABI's e_machine list).
  static constexpr std::array<std::pair<std::uint16_t, std::string_view>, 12> names{{
      {elf_machine_386, "i386 (EM_386)"},
      {8, "MIPS (EM_MIPS)"},
      {20, "PowerPC (EM_PPC)"},
      {21, "PowerPC64 (EM_PPC64)"},
      {22, "IBM S/390 (EM_S390)"},
      {elf_machine_arm, "32-bit ARM (EM_ARM)"},
      {elf_machine_x86_64, "x86-64 (EM_X86_64)"},
      {elf_machine_aarch64, "AArch64 (EM_AARCH64)"},
      {elf_machine_cuda, "CUDA (EM_CUDA)"},
      {243, "RISC-V (EM_RISCV)"},
      {247, "BPF (EM_BPF)"},
      {258, "LoongArch (EM_LOONGARCH)"},
  }};
  for (const auto& [number, name] : names) {
    if (number == machine) return std::string(name);
  }
  return fmt::format("machine {}", machine);
}

std::optional<std::uint16_t> elf_machine_of(std::string_view architecture) {
  if (architecture == "amd64") return elf_machine_x86_64;
  if (architecture == "arm64") return elf_machine_aarch64;
  return std::nullopt;
}

std::string elf_file_description(const ElfIdentity& identity) {
  const auto* bits = identity.elf_class == ElfClass::elf64 ? "64-bit" : "32-bit";
  const auto* kind = identity.type == static_cast<std::uint16_t>(ElfType::executable) ? "executable"
                                                                                      : "shared object or PIE executable";
  return fmt::format("{} {} {}", bits, elf_machine_name(identity.machine), kind);
}

}  // namespace hwimg::hw
