#pragma once
// Just enough of ELF64 (little-endian) to find sections in a file's bytes: the fatbin reader
// needs the host binary's `.nv_fatbin` and the header fields of the cubins inside it.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::hw {

inline constexpr std::uint16_t elf_machine_cuda = 190;  // EM_CUDA
inline constexpr std::uint32_t elf_section_nobits = 8;  // SHT_NOBITS: no bytes in the file

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
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// True when the bytes start with the ELF magic.
[[nodiscard]] bool is_elf(std::span<const std::byte> bytes);

// `name` names the file in errors, which also give the offending offset.
[[nodiscard]] Result<ElfHeader> read_elf_header(std::span<const std::byte> bytes, std::string_view name);
// Every section with its name; sections other than SHT_NOBITS lie within the file.
[[nodiscard]] Result<std::vector<ElfSection>> read_elf_sections(std::span<const std::byte> bytes,
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
