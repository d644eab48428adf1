#pragma once
// The builder's check of what it labels: every module of device code a variant's files ship must
// have exactly the targets the variant declares, since a GPU runs the program only if each module
// the runtime loads has code for it (docs/compatibility.md#device-code-files).

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwimg/hw/device_code.hpp"
#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::hw {

struct ScannedModule {
  std::filesystem::path file;
  DeviceModule module;
};

struct DeviceCodeScan {
  std::vector<ScannedModule> modules;                                       // file order
  std::vector<std::pair<std::filesystem::path, GpuTarget>> relocatable_only;  // -rdc code never loaded
  std::vector<std::filesystem::path> files;                                 // those with device code

  // What a GPU can run: the targets every module has, sorted.
  [[nodiscard]] std::vector<GpuTarget> common_targets() const;
  void append(DeviceCodeScan other);
};

// Reads every regular file under `root` (a file or a directory; symbolic links are not followed)
// that holds device code: host ELF files, static libraries, cubins, fatbins and `.ptx` texts.
[[nodiscard]] Result<DeviceCodeScan> scan_device_code(const std::filesystem::path& root);

// Fails when a module lacks a declared target (naming the file and the module) or when the targets
// common to all modules differ from `declared`: "failed to check the device code of variant V: its
// files embed sm_80 but it declares sm_80, compute_80 (missing compute_80)".
[[nodiscard]] Result<void> check_device_code(std::string_view variant_id, std::span<const GpuTarget> declared,
                                             const DeviceCodeScan& scan);

}  // namespace hwimg::hw
