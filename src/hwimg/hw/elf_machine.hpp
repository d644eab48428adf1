#pragma once
// Which processor an ELF file is for, from the identification and the first header fields every
// ELF file has whatever its class and byte order (System V gABI, "ELF Header";
// docs/compatibility.md#cpu-code): enough to tell an x86-64 program from an AArch64 one.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hwimg::hw {

inline constexpr std::size_t elf_identity_size = 20;  // e_ident, e_type, e_machine

enum class ElfClass : std::uint8_t { none = 0, elf32 = 1, elf64 = 2 };
enum class ElfType : std::uint16_t { none = 0, relocatable = 1, executable = 2, shared = 3, core = 4 };

inline constexpr std::uint16_t elf_machine_386 = 3;       // EM_386
inline constexpr std::uint16_t elf_machine_arm = 40;      // EM_ARM
inline constexpr std::uint16_t elf_machine_x86_64 = 62;   // EM_X86_64
inline constexpr std::uint16_t elf_machine_aarch64 = 183; // EM_AARCH64

struct ElfIdentity {
  ElfClass elf_class = ElfClass::none;
  std::uint16_t type = 0;
  std::uint16_t machine = 0;

  // A program or library the dynamic loader or the kernel runs: ET_EXEC or ET_DYN.
  [[nodiscard]] bool is_loadable() const {
    return type == static_cast<std::uint16_t>(ElfType::executable) ||
           type == static_cast<std::uint16_t>(ElfType::shared);
  }
};

// The identity of the file whose first bytes are `head`; nothing when it is not ELF (or too short).
[[nodiscard]] std::optional<ElfIdentity> read_elf_identity(std::span<const std::byte> head);

// "64-bit x86-64 (EM_X86_64) executable", "32-bit ARM (EM_ARM) shared object or PIE executable".
[[nodiscard]] std::string elf_file_description(const ElfIdentity& identity);

// "x86-64 (EM_X86_64)", "AArch64 (EM_AARCH64)", ... or "machine 1234".
[[nodiscard]] std::string elf_machine_name(std::uint16_t machine);

// The machine a 64-bit ELF program for the OCI architecture `architecture` has: EM_X86_64 for
// amd64, EM_AARCH64 for arm64; nothing for an architecture hwimg builds no variants for.
[[nodiscard]] std::optional<std::uint16_t> elf_machine_of(std::string_view architecture);

}  // namespace hwimg::hw
