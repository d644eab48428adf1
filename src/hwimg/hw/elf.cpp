#include "hwimg/hw/elf.hpp"

#include <algorithm>

namespace hwimg::hw {

namespace {

constexpr std::uint64_t elf_header_size = 64;
constexpr std::uint64_t section_header_size = 64;
constexpr std::uint16_t extended_section_index = 0xffff;  // SHN_XINDEX
constexpr std::uint64_t elf64_symbol_size = 24;                  // Elf64_Sym
constexpr std::uint64_t elf64_rela_size = 24;                    // Elf64_Rela

bool within(std::span<const std::byte> bytes, std::uint64_t offset, std::uint64_t size) {
  return offset <= bytes.size() && size <= bytes.size() - offset;
}

}  // namespace

bool is_elf(std::span<const std::byte> bytes) {
  return bytes.size() >= 4 && bytes[0] == std::byte{0x7f} && bytes[1] == std::byte{'E'} &&
         bytes[2] == std::byte{'L'} && bytes[3] == std::byte{'F'};
}

Result<ElfHeader> read_elf_header(std::span<const std::byte> bytes, std::string_view name) {
  if (!is_elf(bytes)) {
    return fail("failed to read ELF file {}: no ELF magic at offset 0", name);
  }
  if (bytes.size() < elf_header_size) {
    return fail("failed to read ELF file {}: the header ends beyond the end of the file ({} bytes)", name,
                bytes.size());
  }
  if (bytes[4] != std::byte{2} || bytes[5] != std::byte{1}) {
    return fail("failed to read ELF file {}: only 64-bit little-endian ELF is supported (class {}, data {} at "
                "offset 4)",
                name, static_cast<int>(bytes[4]), static_cast<int>(bytes[5]));
  }
  return ElfHeader{
      .os_abi = read_le<std::uint8_t>(bytes, 7),
      .abi_version = read_le<std::uint8_t>(bytes, 8),
      .type = read_le<std::uint16_t>(bytes, 16),
      .machine = read_le<std::uint16_t>(bytes, 18),
      .flags = read_le<std::uint32_t>(bytes, 48),
  };
}

Result<std::vector<ElfSection>> read_elf_sections(std::span<const std::byte> bytes, std::string_view name) {
  HWIMG_TRY(read_elf_header(bytes, name));
  const auto table = read_le<std::uint64_t>(bytes, 40);
  const auto entry_size = read_le<std::uint16_t>(bytes, 58);
  std::uint64_t count = read_le<std::uint16_t>(bytes, 60);
  std::uint64_t names_index = read_le<std::uint16_t>(bytes, 62);
  if (table == 0) {
    return std::vector<ElfSection>{};
  }
  if (entry_size != section_header_size) {
    return fail("failed to read ELF file {}: section header size {} at offset 58 is not 64", name, entry_size);
  }
  if (!within(bytes, table, section_header_size)) {
    return fail("failed to read ELF file {}: section header table at offset {} is beyond the end of the file "
                "({} bytes)",
                name, table, bytes.size());
  }
  // Large section counts and string-table indexes live in section 0 (ELF gABI).
  if (count == 0) {
    count = read_le<std::uint64_t>(bytes, table + 32);
  }
  if (names_index == extended_section_index) {
    names_index = read_le<std::uint32_t>(bytes, table + 40);
  }
  if (count > (bytes.size() - table) / section_header_size) {
    return fail("failed to read ELF file {}: {} section headers at offset {} run beyond the end of the file "
                "({} bytes)",
                name, count, table, bytes.size());
  }
  std::vector<ElfSection> sections;
  std::vector<std::uint32_t> name_offsets;
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto at = table + i * section_header_size;
    ElfSection section{
        .name = {},
        .type = read_le<std::uint32_t>(bytes, at + 4),
        .flags = read_le<std::uint64_t>(bytes, at + 8),
        .address = read_le<std::uint64_t>(bytes, at + 16),
        .offset = read_le<std::uint64_t>(bytes, at + 24),
        .size = read_le<std::uint64_t>(bytes, at + 32),
        .link = read_le<std::uint32_t>(bytes, at + 40),
        .entry_size = read_le<std::uint64_t>(bytes, at + 56),
    };
    if (section.type != elf_section_nobits && !within(bytes, section.offset, section.size)) {
      return fail("failed to read ELF file {}: section {} (offset {}, {} bytes) runs beyond the end of the "
                  "file ({} bytes)",
                  name, i, section.offset, section.size, bytes.size());
    }
    name_offsets.push_back(read_le<std::uint32_t>(bytes, at));
    sections.push_back(std::move(section));
  }
  if (names_index >= sections.size()) {
    return fail("failed to read ELF file {}: section name table index {} at offset 62 is out of range ({} "
                "sections)",
                name, names_index, sections.size());
  }
  const auto& names = sections[names_index];
  if (names.type == elf_section_nobits) {
    return fail("failed to read ELF file {}: section name table {} has no bytes in the file", name, names_index);
  }
  const auto* names_begin = reinterpret_cast<const char*>(bytes.data() + names.offset);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (name_offsets[i] >= names.size) {
      return fail("failed to read ELF file {}: name of section {} at offset {} is outside the name table", name,
                  i, names.offset + name_offsets[i]);
    }
    const std::string_view rest(names_begin + name_offsets[i], names.size - name_offsets[i]);
    sections[i].name = std::string(rest.substr(0, rest.find('\0')));
  }
  return sections;
}

Result<std::vector<ElfSymbol>> read_elf_symbols(std::span<const std::byte> bytes, std::span<const ElfSection> sections,
                                                std::string_view name) {
  std::vector<ElfSymbol> symbols;
  for (const auto& table : sections) {
    if (table.type != elf_section_symtab && table.type != elf_section_dynsym) continue;
    if (table.entry_size != elf64_symbol_size) {
      return fail("failed to read ELF file {}: symbol table {} has entries of {} bytes, not {}", name, table.name,
                  table.entry_size, elf64_symbol_size);
    }
    if (table.link >= sections.size() || sections[table.link].type == elf_section_nobits) {
      return fail("failed to read ELF file {}: symbol table {} names string table {}, which has no bytes", name,
                  table.name, table.link);
    }
    // read_elf_sections checked that both lie within the file.
    const auto& strings = sections[table.link];
    const std::string_view text(reinterpret_cast<const char*>(bytes.data() + strings.offset), strings.size);
    for (std::uint64_t at = table.offset + elf64_symbol_size; at + elf64_symbol_size <= table.offset + table.size;
         at += elf64_symbol_size) {
      const auto name_offset = read_le<std::uint32_t>(bytes, at);
      if (name_offset >= text.size()) {
        return fail("failed to read ELF file {}: the name of the symbol at offset {} is outside {}", name, at,
                    sections[table.link].name);
      }
      const auto rest = text.substr(name_offset);
      symbols.push_back(ElfSymbol{
          .name = std::string(rest.substr(0, rest.find('\0'))),
          .type = static_cast<ElfSymbolType>(read_le<std::uint8_t>(bytes, at + 4) & 0xf),
          .section = read_le<std::uint16_t>(bytes, at + 6),
          .value = read_le<std::uint64_t>(bytes, at + 8),
          .size = read_le<std::uint64_t>(bytes, at + 16),
          .table = table.type == elf_section_dynsym ? ElfSymbolTable::dynsym : ElfSymbolTable::symtab,
      });
    }
  }
  return symbols;
}

Result<std::vector<ElfRelocation>> read_elf_relocations(std::span<const std::byte> bytes,
                                                       std::span<const ElfSection> sections, std::string_view name) {
  std::vector<ElfRelocation> relocations;
  for (const auto& table : sections) {
    if (table.type != elf_section_rela) continue;
    if (table.entry_size != elf64_rela_size) {
      return fail("failed to read ELF file {}: relocation section {} has entries of {} bytes, not {}", name,
                  table.name, table.entry_size, elf64_rela_size);
    }
    // A section without a symbol table (sh_link 0) holds only relocations without symbols.
    const ElfSection* symbols = nullptr;
    std::string_view strings;
    if (table.link != 0) {
      if (table.link >= sections.size() || sections[table.link].entry_size != elf64_symbol_size ||
          (sections[table.link].type != elf_section_symtab && sections[table.link].type != elf_section_dynsym)) {
        return fail("failed to read ELF file {}: relocation section {} links to section {}, which is no symbol table",
                    name, table.name, table.link);
      }
      symbols = &sections[table.link];
      if (symbols->link >= sections.size() || sections[symbols->link].type == elf_section_nobits) {
        return fail("failed to read ELF file {}: symbol table {} names string table {}, which has no bytes", name,
                    symbols->name, symbols->link);
      }
      const auto& text = sections[symbols->link];
      strings = std::string_view(reinterpret_cast<const char*>(bytes.data() + text.offset), text.size);
    }
    for (std::uint64_t at = table.offset; at + elf64_rela_size <= table.offset + table.size; at += elf64_rela_size) {
      const auto info = read_le<std::uint64_t>(bytes, at + 8);
      const auto index = info >> 32;
      ElfRelocation relocation{
          .offset = read_le<std::uint64_t>(bytes, at),
          .type = static_cast<std::uint32_t>(info & 0xffffffff),
          .symbol = {},
          .addend = static_cast<std::int64_t>(read_le<std::uint64_t>(bytes, at + 16)),
      };
      if (index != 0) {
        if (symbols == nullptr || index >= symbols->size / elf64_symbol_size) {
          return fail("failed to read ELF file {}: the relocation at offset {} names symbol {}, which is not in {}",
                      name, at, index, symbols == nullptr ? std::string("any symbol table") : symbols->name);
        }
        const auto name_offset = read_le<std::uint32_t>(bytes, symbols->offset + index * elf64_symbol_size);
        if (name_offset >= strings.size()) {
          return fail("failed to read ELF file {}: the name of symbol {} of {} is outside its string table", name,
                      index, symbols->name);
        }
        const auto rest = strings.substr(name_offset);
        relocation.symbol = std::string(rest.substr(0, rest.find('\0')));
      }
      relocations.push_back(std::move(relocation));
    }
  }
  return relocations;
}

}  // namespace hwimg::hw
