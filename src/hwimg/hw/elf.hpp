#pragma once
// Just enough of ELF64 (little-endian) to find sections and symbols in a file's bytes: the fatbin
// reader needs the host binary's `.nv_fatbin` and the header fields of the cubins inside it, the
// instruction scan the executable sections and the function symbols (System V gABI, "Sections" and
// "Symbol Table", "Relocation"; docs/compatibility.md#cpu-code).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::hw {

inline constexpr std::uint16_t elf_machine_cuda = 190;  // EM_CUDA
inline constexpr std::uint32_t elf_section_nobits = 8;  // SHT_NOBITS: no bytes in the file
inline constexpr std::uint32_t elf_section_symtab = 2;  // SHT_SYMTAB
inline constexpr std::uint32_t elf_section_note = 7;    // SHT_NOTE
inline constexpr std::uint32_t elf_section_rela = 4;    // SHT_RELA
inline constexpr std::uint32_t elf_section_dynsym = 11; // SHT_DYNSYM
inline constexpr std::uint64_t elf_section_execinstr = 0x4;  // SHF_EXECINSTR

enum class ElfSymbolType : std::uint8_t { none = 0, object = 1, function = 2, section = 3, file = 4, gnu_ifunc = 10 };
// Which table a symbol came from: a defined .dynsym symbol is one other objects can bind to.
enum class ElfSymbolTable : std::uint8_t { symtab, dynsym };

struct ElfHeader {
  std::uint8_t os_abi = 0;
  std::uint8_t abi_version = 0;
  std::uint16_t type = 0;
  std::uint16_t machine = 0;
  std::uint32_t flags = 0;
};

struct ElfSection {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint64_t address = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint64_t entry_size = 0;

  [[nodiscard]] bool is_executable() const { return (flags & elf_section_execinstr) != 0; }
};

struct ElfSymbol {
  std::string name;
  ElfSymbolType type = ElfSymbolType::none;
  std::uint16_t section = 0;  // 0: undefined
  std::uint64_t value = 0;    // the address, for functions
  std::uint64_t size = 0;
  ElfSymbolTable table = ElfSymbolTable::symtab;
};

// One Elf64_Rela entry of an SHT_RELA section, its symbol named ("" for index 0).
struct ElfRelocation {
  std::uint64_t offset = 0;  // the address it patches
  std::uint32_t type = 0;    // R_X86_64_GLOB_DAT, R_X86_64_RELATIVE, ...
  std::string symbol;
  std::int64_t addend = 0;
};

// True when the bytes start with the ELF magic.
[[nodiscard]] bool is_elf(std::span<const std::byte> bytes);

// `name` names the file in errors, which also give the offending offset.
[[nodiscard]] Result<ElfHeader> read_elf_header(std::span<const std::byte> bytes, std::string_view name);
// Every section with its name; sections other than SHT_NOBITS lie within the file.
[[nodiscard]] Result<std::vector<ElfSection>> read_elf_sections(std::span<const std::byte> bytes,
                                                                std::string_view name);
// The symbols of .symtab and .dynsym (both: a stripped library keeps only .dynsym), names
// included; `sections` are the file's, from read_elf_sections.
[[nodiscard]] Result<std::vector<ElfSymbol>> read_elf_symbols(std::span<const std::byte> bytes,
                                                              std::span<const ElfSection> sections,
                                                              std::string_view name);

// The entries of every SHT_RELA section (.rela.dyn, .rela.plt), symbols named from the symbol table
// each section links to (System V gABI, "Relocation").
[[nodiscard]] Result<std::vector<ElfRelocation>> read_elf_relocations(std::span<const std::byte> bytes,
                                                                      std::span<const ElfSection> sections,
                                                                      std::string_view name);

// DT_SONAME of the .dynamic section (System V gABI, "Dynamic Section"); none for a file without
// one (an executable, a static object).
[[nodiscard]] Result<std::optional<std::string>> read_elf_soname(std::span<const std::byte> bytes,
                                                                 std::span<const ElfSection> sections,
                                                                 std::string_view name);

// Little-endian reads; the caller has checked the bounds.
template <typename T>
[[nodiscard]] T read_le(std::span<const std::byte> bytes, std::uint64_t offset) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value = static_cast<T>(value | static_cast<T>(static_cast<T>(bytes[offset + i]) << (8 * i)));
  }
  return value;
}

}  // namespace hwimg::hw
