// The device-code reader on every kind of file it accepts: host ELF, standalone cubin, fatbin, PTX
// text and static library (ar archive), module by module.
#include <cstddef>
#include <cstdint>
#include <span>

#include "hwimg/hw/ar_archive.hpp"
#include "hwimg/hw/device_code.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg::hw;
  const auto bytes = std::as_bytes(std::span(data, size));
  (void)device_file_kind(bytes, "fuzz.ptx");
  for (const auto kind : {DeviceFileKind::host_elf, DeviceFileKind::cubin, DeviceFileKind::fatbin,
                          DeviceFileKind::ptx, DeviceFileKind::archive}) {
    if (const auto code = read_device_code(bytes, kind, "fuzz")) (void)common_targets(code->modules);
  }
  (void)read_ar_members(bytes, "fuzz");
  return 0;
}
