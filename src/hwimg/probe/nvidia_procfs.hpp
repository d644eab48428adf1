#pragma once
// NVIDIA facts from the kernel module's files: /proc/driver/nvidia/version (proprietary and open
// module formats), /sys/module/nvidia/version, and /proc/driver/nvidia/gpus/*/information.
// They give the driver version and each GPU's name and UUID, never a compute capability.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "hwimg/probe/nvidia_nvml.hpp"

namespace hwimg::probe {

// The version in the "NVRM version:" line ("580.65.06"), nullopt when there is none.
[[nodiscard]] std::optional<std::string> parse_nvidia_version_file(std::string_view text);

// Model and GPU UUID of one gpus/<bus id>/information file.
[[nodiscard]] GpuFacts parse_gpu_information(std::string_view text);

// The driver version from procfs, else sysfs; nullopt when no NVIDIA kernel module is loaded.
[[nodiscard]] std::optional<std::string> read_nvidia_driver_version(const std::filesystem::path& proc_root,
                                                                    const std::filesystem::path& sys_root);

// Driver version and GPUs (ordered by bus ID); nullopt when no NVIDIA kernel module is loaded.
[[nodiscard]] std::optional<NvidiaFacts> read_nvidia_procfs(const std::filesystem::path& proc_root,
                                                            const std::filesystem::path& sys_root,
                                                            const StepLog& log);

}  // namespace hwimg::probe
