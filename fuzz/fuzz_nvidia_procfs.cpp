// /proc/driver/nvidia/version and gpus/*/information as the kernel module writes them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwimg/probe/nvidia_procfs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)hwimg::probe::parse_nvidia_version_file(text);
  (void)hwimg::probe::parse_gpu_information(text);
  return 0;
}
