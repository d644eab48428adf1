#include <algorithm>

#include "hwimg/hw/elf.hpp"

namespace hwimg::hw {

namespace {

constexpr std::uint32_t section_dynamic = 6;     // SHT_DYNAMIC
constexpr std::uint64_t dynamic_entry_size = 16;  // Elf64_Dyn
constexpr std::int64_t tag_null = 0;              // DT_NULL: the end of the array
constexpr std::int64_t tag_soname = 14;           // DT_SONAME: a string table offset

}  // namespace

Result<std::optional<std::string>> read_elf_soname(std::span<const std::byte> bytes,
                                                   std::span<const ElfSection> sections, std::string_view name) {
  const auto dynamic = std::ranges::find_if(sections, [](const ElfSection& s) { return s.type == section_dynamic; });
  if (dynamic == sections.end()) return std::optional<std::string>();
  if (dynamic->link >= sections.size()) {
    return fail("failed to read ELF file {}: .dynamic links to section {}, which does not exist", name, dynamic->link);
  }
  const auto& strings = sections[dynamic->link];
  const auto fits = [&](std::uint64_t offset, std::uint64_t size) {
    return offset <= bytes.size() && size <= bytes.size() - offset;
  };
  if (!fits(dynamic->offset, dynamic->size) || !fits(strings.offset, strings.size)) {
    return fail("failed to read ELF file {}: .dynamic or its string table lies beyond the end of the file", name);
  }
  for (std::uint64_t at = dynamic->offset; at + dynamic_entry_size <= dynamic->offset + dynamic->size;
       at += dynamic_entry_size) {
    const auto tag = static_cast<std::int64_t>(read_le<std::uint64_t>(bytes, at));
    if (tag == tag_null) break;
    if (tag != tag_soname) continue;
    const auto offset = read_le<std::uint64_t>(bytes, at + 8);
    if (offset >= strings.size) {
      return fail("failed to read ELF file {}: DT_SONAME offset {} lies beyond its string table ({} bytes)", name,
                  offset, strings.size);
    }
    const auto* begin = reinterpret_cast<const char*>(bytes.data() + strings.offset + offset);
    const auto* end = reinterpret_cast<const char*>(bytes.data() + strings.offset + strings.size);
    const auto* nul = std::find(begin, end, '\0');
    if (nul == end) return fail("failed to read ELF file {}: DT_SONAME is not NUL-terminated", name);
    return std::optional<std::string>(std::string(begin, nul));
  }
  return std::optional<std::string>();
}

}  // namespace hwimg::hw
