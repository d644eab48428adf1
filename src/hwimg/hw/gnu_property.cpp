#include "hwimg/hw/gnu_property.hpp"

namespace hwimg::hw {
namespace {

constexpr std::uint32_t note_gnu_property = 5;               // NT_GNU_PROPERTY_TYPE_0
constexpr std::uint32_t property_x86_isa_needed = 0xc0008002;  // GNU_PROPERTY_X86_ISA_1_NEEDED
constexpr std::uint64_t property_alignment = 8;              // ELF64 property arrays

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// The level of the highest bit of GNU_PROPERTY_X86_ISA_1_{BASELINE,V2,V3,V4} (bits 0..3).
X86Level level_of_bits(std::uint32_t bits) {
  auto level = X86Level::v1;
  for (int n = 2; n <= 4; ++n) {
    if ((bits & (1U << (n - 1))) != 0) level = static_cast<X86Level>(n);
  }
  return level;
}

}  // namespace

Result<std::optional<X86Level>> read_x86_isa_needed(std::span<const std::byte> bytes,
                                                    std::span<const ElfSection> sections, std::string_view name) {
  for (const auto& section : sections) {
    if (section.type != elf_section_note || section.name != ".note.gnu.property") continue;
    // read_elf_sections checked that the section lies within the file.
    const auto notes = bytes.subspan(section.offset, section.size);
    std::uint64_t at = 0;
    while (at + 12 <= notes.size()) {
      const auto name_size = read_le<std::uint32_t>(notes, at);
      const auto desc_size = read_le<std::uint32_t>(notes, at + 4);
      const auto type = read_le<std::uint32_t>(notes, at + 8);
      const auto desc = at + 12 + align_up(name_size, 4);
      if (desc > notes.size() || desc_size > notes.size() - desc) {
        return fail("failed to read ELF file {}: the note at offset {} of .note.gnu.property runs beyond the "
                    "section ({} bytes)",
                    name, at, notes.size());
      }
      const auto name_text = notes.subspan(at + 12, name_size);
      const bool gnu = name_size == 4 && name_text[0] == std::byte{'G'} && name_text[1] == std::byte{'N'} &&
                       name_text[2] == std::byte{'U'} && name_text[3] == std::byte{0};
      if (gnu && type == note_gnu_property) {
        std::uint64_t p = desc;
        while (p + 8 <= desc + desc_size) {
          const auto property = read_le<std::uint32_t>(notes, p);
          const auto size = read_le<std::uint32_t>(notes, p + 4);
          if (size > desc + desc_size - p - 8) {
            return fail("failed to read ELF file {}: property {:#x} at offset {} of .note.gnu.property runs "
                        "beyond its note",
                        name, property, p);
          }
          if (property == property_x86_isa_needed && size == 4) {
            return std::optional<X86Level>(level_of_bits(read_le<std::uint32_t>(notes, p + 8)));
          }
          p += 8 + align_up(size, property_alignment);
        }
      }
      at = desc + align_up(desc_size, property_alignment);
    }
  }
  return std::optional<X86Level>();
}

}  // namespace hwimg::hw
