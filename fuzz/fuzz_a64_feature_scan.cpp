// The CPU-code check's reader of AArch64 ELF files from an arm64 variant's layers
// (docs/recipe.md#cpu-code): the identity, the section and symbol tables, the mapping symbols and
// the A64 words of the executable sections, IFUNC resolvers included.
#include <cstddef>
#include <cstdint>
#include <span>

#include "hwimg/hw/a64_feature_scan.hpp"
#include "hwimg/hw/elf_machine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg::hw;
  const auto bytes = std::as_bytes(std::span(data, size));
  (void)read_elf_identity(bytes);
  if (const auto scan = scan_a64_features(bytes, "fuzz")) (void)scan->functions.size();
  return 0;
}
