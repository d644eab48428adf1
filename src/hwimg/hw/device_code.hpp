#pragma once
// The device code a file ships, module by module: the CUDA runtime loads each fatbin container of a
// host binary as one module, and `cuModuleLoad` each standalone cubin, fatbin or PTX file; a kernel
// runs on a GPU only if its own module has code for that GPU (docs/compatibility.md#device-code-files).

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::hw {

struct DeviceModule {
  std::string where;               // within its file: "fatbin container at offset 4096", "member k.o, ..."
  std::vector<GpuTarget> targets;  // runnable (no LTO IR, no device-link stubs), sorted, distinct
};

struct FileDeviceCode {
  std::vector<DeviceModule> modules;        // those that define kernels
  std::vector<GpuTarget> relocatable_only;  // kept in `__nv_relfatbin` (-rdc) only: never loaded
};

enum class DeviceFileKind { none, host_elf, cubin, fatbin, ptx, archive };

// What a file is, from its first bytes (8 suffice) and, for PTX text, its name ending in `.ptx`.
[[nodiscard]] DeviceFileKind device_file_kind(std::span<const std::byte> head, std::string_view file_name);

// The modules of a file of that kind; `name` names it in errors.
[[nodiscard]] Result<FileDeviceCode> read_device_code(std::span<const std::byte> bytes, DeviceFileKind kind,
                                                      std::string_view name);

// The targets every module has (what the file guarantees a GPU can run), sorted.
[[nodiscard]] std::vector<GpuTarget> common_targets(std::span<const DeviceModule> modules);

}  // namespace hwimg::hw
