// The ELF and fatbin reader on a whole file (as the builder reads a layer's binaries and a bundled
// driver's libraries) and on raw fatbin section bytes, each container header and compressed entry
// bounds-checked.
#include <cstddef>
#include <cstdint>
#include <span>

#include "hwimg/hw/elf.hpp"
#include "hwimg/hw/fatbin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg::hw;
  const auto bytes = std::as_bytes(std::span(data, size));
  if (is_elf(bytes)) {
    (void)read_elf_header(bytes, "fuzz");
    if (const auto sections = read_elf_sections(bytes, "fuzz")) (void)read_elf_soname(bytes, *sections, "fuzz");
    (void)list_device_code(bytes, "fuzz");
    (void)read_fatbin_entries(bytes, "fuzz", FatbinSections::relocatable);
    (void)read_cubin_target(bytes, "fuzz");
  } else {
    (void)parse_fatbin(bytes, 0, "fuzz");
  }
  return 0;
}
