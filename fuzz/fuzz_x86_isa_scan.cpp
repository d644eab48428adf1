// The CPU-code check's reader of ELF files from a variant's layers (docs/recipe.md#cpu-code): the
// identity, the section, symbol and GNU property tables, and Zydis over the executable sections.
#include <cstddef>
#include <cstdint>
#include <span>

#include "hwimg/hw/elf_machine.hpp"
#include "hwimg/hw/x86_isa_scan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg::hw;
  const auto bytes = std::as_bytes(std::span(data, size));
  (void)read_elf_identity(bytes);
  if (const auto scan = scan_x86_isa(bytes, "fuzz")) (void)scan->functions.size();
  return 0;
}
