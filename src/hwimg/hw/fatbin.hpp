#pragma once
// The CUDA fatbinary inside host ELF files (reference/nvidia-interfaces.md §4): which SASS and PTX
// images a binary really carries, so the builder can check what it labels.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::hw {

enum class FatbinEntryKind { ptx, sass, lto_ir };

struct FatbinEntry {
  FatbinEntryKind kind = FatbinEntryKind::sass;
  int arch = 0;  // 10 * major + minor, as in sm_90
  ArchFeatures features = ArchFeatures::baseline;
  std::uint64_t flags = 0;
  std::uint64_t offset = 0;  // of the entry header, from the start of the file
  // An uncompressed cubin without functions: what nvcc's device-link step adds for each target,
  // whether or not any object has kernels for it.
  bool link_stub = false;

  // The device-code target; meaningless for LTO IR.
  [[nodiscard]] GpuTarget target() const;
};

// Walks the containers in `data` (the contents of a fatbin section at `base_offset` in the file
// `name`), bounds-checking every header; an uncompressed cubin must agree with its entry header.
[[nodiscard]] Result<std::vector<FatbinEntry>> parse_fatbin(std::span<const std::byte> data,
                                                            std::uint64_t base_offset, std::string_view name);

// Every entry of the `.nv_fatbin` and `__nv_relfatbin` sections of an ELF file (none when it has
// neither).
[[nodiscard]] Result<std::vector<FatbinEntry>> read_fatbin_entries(std::span<const std::byte> elf,
                                                                   std::string_view name);

// The distinct runnable targets an ELF file embeds, sorted (sm_80, sm_90, compute_90, sm_90a);
// LTO IR is not runnable and device-link stubs hold no kernels, so neither is listed.
[[nodiscard]] Result<std::vector<GpuTarget>> list_device_targets(std::span<const std::byte> elf,
                                                                 std::string_view name);
// The same as names: "sm_80", "compute_90".
[[nodiscard]] Result<std::vector<std::string>> list_device_code(std::span<const std::byte> elf,
                                                                std::string_view name);

}  // namespace hwimg::hw
