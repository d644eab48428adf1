#pragma once
// Where a program's code lies and which function each address belongs to, for the A64 and x86 scans
// (hw/a64_feature_scan, hw/x86_isa_scan; docs/recipe.md#cpu-code): the executable
// sections, the function symbols (.symtab, else .dynsym) and the stretches between them, and which
// functions are dispatched code by their names (GCC/Clang multiversions), by being an IFUNC
// resolver or by being an address a resolver returns. The x86 scan shares the code ranges; its
// function boundaries also track linkage for its CPU-check dispatch (hw/detail/x86_dispatch.hpp).

#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/code_scan.hpp"
#include "hwimg/hw/elf.hpp"

namespace hwimg::hw::detail {

// What a resolver may be scanned for when its symbol has no size.
inline constexpr std::uint64_t unsized_resolver_bytes = 512;

struct CodeRange {
  std::uint64_t address = 0;
  std::span<const std::byte> bytes;
  std::size_t section = 0;  // its index in the section table
};

// Where a function starts, or a stretch between functions does: a function's end starts a gap.
struct CodeStretch {
  std::uint64_t address = 0;
  bool starts_function = false;
  std::string name;
  CodeDispatch dispatch = CodeDispatch::none;
};

// Whether the name of a function the scan cannot see dispatch in says it checks the CPU itself.
using RuntimeDispatchRule = bool (*)(std::string_view name);

// The executable sections with bytes in the file, by address.
[[nodiscard]] std::vector<CodeRange> executable_code(std::span<const std::byte> bytes,
                                                     std::span<const ElfSection> sections);
// Up to `size` bytes of code from `address`; empty when `address` is outside the code.
[[nodiscard]] std::span<const std::byte> code_bytes_at(std::span<const CodeRange> code, std::uint64_t address,
                                                 std::uint64_t size);
[[nodiscard]] bool is_code_address(std::span<const CodeRange> code, std::uint64_t address);
// A defined FUNC or GNU_IFUNC symbol.
[[nodiscard]] bool is_defined_function(const ElfSymbol& symbol);

// The functions, the gaps between them and the unnamed IFUNC targets, sorted by address.
// `resolvers` are the IFUNC symbols' addresses, `targets` the code addresses they return.
[[nodiscard]] std::vector<CodeStretch> function_stretches(std::span<const ElfSymbol> symbols,
                                                        std::span<const CodeRange> code,
                                                        const std::set<std::uint64_t>& resolvers,
                                                        const std::set<std::uint64_t>& targets,
                                                        RuntimeDispatchRule runtime_dispatched);

// The symbol's name, or "code at 0x1234" for a stretch between symbols.
[[nodiscard]] std::string stretch_name(const CodeStretch& boundary);

}  // namespace hwimg::hw::detail
