#pragma once
// The CUDA fatbinary inside host ELF files (docs/compatibility.md#fatbin-format): which SASS and PTX
// images a binary really carries, so the builder can check what it labels.

#include <cstddef>
#include <cstdint>
#include <optional>
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
  std::uint64_t offset = 0;     // of the entry header, from the start of the file
  std::uint64_t container = 0;  // offset of its container: one container is one module the runtime loads
  // A cubin without functions: what nvcc's device-link step adds for each target, whether or not
  // any object has kernels for it.
  bool link_stub = false;
  std::string ptx_isa;  // PTX entries: the ISA version of the text (".version 9.0" -> "9.0")

  // The device-code target; meaningless for LTO IR.
  [[nodiscard]] GpuTarget target() const;
};

// Walks the containers in `data` (the contents of a fatbin section at `base_offset` in the file
// `name`), bounds-checking every header; each cubin (decompressed if needed) must be an EM_CUDA ELF
// file for the entry's SM, and each PTX text must `.target` the entry's architecture.
[[nodiscard]] Result<std::vector<FatbinEntry>> parse_fatbin(std::span<const std::byte> data,
                                                            std::uint64_t base_offset, std::string_view name);

// Which fatbin sections of an ELF file to read.
enum class FatbinSections { loaded, relocatable };

// Every entry of the `.nv_fatbin` sections of an ELF file: the device code the CUDA runtime loads.
// Only a file without one (an `nvcc -dc` object) is read from `__nv_relfatbin` instead, whose -rdc
// objects an executable keeps for device linking but never loads. None when it has neither.
[[nodiscard]] Result<std::vector<FatbinEntry>> read_fatbin_entries(std::span<const std::byte> elf,
                                                                   std::string_view name);
// The entries of one kind of section only: `relocatable` gives what `__nv_relfatbin` keeps even where
// the file also has `.nv_fatbin`, so that errors can say a target exists only as -rdc code.
[[nodiscard]] Result<std::vector<FatbinEntry>> read_fatbin_entries(std::span<const std::byte> elf,
                                                                   std::string_view name, FatbinSections sections);

// A standalone cubin (`nvcc -cubin`, loaded with cuModuleLoad): its SASS target, `a` from its
// `.nv.compat` section (`f` is not recorded in a cubin), or nullopt when it defines no functions.
[[nodiscard]] Result<std::optional<GpuTarget>> read_cubin_target(std::span<const std::byte> cubin,
                                                                 std::string_view name);
// A PTX text (`nvcc -ptx`, JIT-compiled by cuModuleLoad): the `compute_XY[a|f]` its `.target` names.
[[nodiscard]] Result<GpuTarget> read_ptx_target(std::string_view ptx, std::string_view name);

// The distinct runnable targets an ELF file embeds, sorted (sm_80, sm_90, compute_90, sm_90a);
// LTO IR is not runnable and device-link stubs hold no kernels, so neither is listed.
[[nodiscard]] Result<std::vector<GpuTarget>> list_device_targets(std::span<const std::byte> elf,
                                                                 std::string_view name);
// The same as names: "sm_80", "compute_90".
[[nodiscard]] Result<std::vector<std::string>> list_device_code(std::span<const std::byte> elf,
                                                                std::string_view name);

}  // namespace hwimg::hw
