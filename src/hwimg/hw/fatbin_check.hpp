#pragma once
// The builder's check of what it labels (issue 3 item 5): the device code a variant's files really
// embed must be exactly the targets the variant declares.

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::hw {

struct DeviceCodeScan {
  std::vector<GpuTarget> targets;              // distinct, sorted, over every file
  std::vector<std::filesystem::path> files;    // the ELF files that embed device code
};

// Reads every regular ELF file under `root` (a file or a directory; symbolic links are not
// followed) and collects the device code their fatbins embed.
[[nodiscard]] Result<DeviceCodeScan> scan_device_code(const std::filesystem::path& root);

// Fails when `found` differs from `declared`, showing both lists and the difference:
// "failed to check the device code of variant V: its files embed sm_80 but it declares sm_80,
// compute_80 (missing compute_80)".
[[nodiscard]] Result<void> check_device_code(std::string_view variant_id, std::span<const GpuTarget> declared,
                                             std::span<const GpuTarget> found);

}  // namespace hwimg::hw
