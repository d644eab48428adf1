#pragma once
// The x86 ISA level a program says it needs, from its GNU property note (.note.gnu.property,
// NT_GNU_PROPERTY_TYPE_0 with GNU_PROPERTY_X86_ISA_1_NEEDED; the x86-64 psABI, "Program Property";
// docs/compatibility.md#instruction-sets). GCC writes it only with -mneeded, so its absence says
// nothing.

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "hwimg/hw/cpu_levels.hpp"
#include "hwimg/hw/elf.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::hw {

// The highest level the note marks as needed; nothing without the note or the property.
[[nodiscard]] Result<std::optional<X86Level>> read_x86_isa_needed(std::span<const std::byte> bytes,
                                                                  std::span<const ElfSection> sections,
                                                                  std::string_view name);

}  // namespace hwimg::hw
