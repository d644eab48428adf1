#pragma once
// The facts about a host that selection needs: what `hwimg probe` prints and what
// `hwimg select --host FILE` reads (docs/selection.md#host-facts).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/cpu_levels.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::probe {

struct CpuFacts {
  hw::CpuArch arch = hw::CpuArch::amd64;
  std::string vendor;                     // NFD spelling: "Intel", "AMD", "ARM", ...
  std::string model_name;
  std::optional<int> family;              // x86 only
  std::optional<int> model;               // x86 only
  std::optional<hw::X86Level> level;      // amd64 only
  std::optional<std::string> microarch;   // archspec name; absent when only a generic level fits
  std::vector<std::string> features;      // enabled by the OS, /proc/cpuinfo names, sorted
  std::string implementer;                // aarch64 `CPU implementer` ("0x41"), empty when unknown or amd64
  std::string cpu_part;                   // aarch64 `CPU part` ("0xd4f"): tells equal-featured cores apart
};

struct GpuFacts {
  int index = 0;
  std::string uuid;
  std::string name;
  std::optional<std::string> compute_capability;  // "9.0"; unknown from procfs alone
  std::optional<std::string> brand;               // NVML's brand ("NVIDIA", "GeForce", ...)
  std::optional<std::uint64_t> memory_mib;
};

struct NvidiaFacts {
  std::optional<std::string> driver_version;       // "580.65.06"
  std::optional<std::string> cuda_driver_version;  // "13.0": newest CUDA the driver supports
  std::string source;                              // "nvml", "cuda", "procfs" or "override"
  std::vector<GpuFacts> gpus;
};

struct HostFacts {
  std::string os = "linux";
  CpuFacts cpu;
  std::optional<NvidiaFacts> nvidia;  // nullopt: no NVIDIA driver
  // The HWIMG_OVERRIDE_* in effect ("HWIMG_OVERRIDE_CUDA=\"12.4\""), for explanations; not in the schema.
  std::vector<std::string> overrides;
};

// Fills cpu.level and cpu.microarch from features and vendor where absent.
void derive_cpu_facts(CpuFacts& cpu);

// Pretty JSON with the schema of docs/selection.md#host-facts, ending in a newline.
[[nodiscard]] std::string to_json(const HostFacts& facts);
[[nodiscard]] std::string to_json(const NvidiaFacts& nvidia);

// Reads a facts file; `file_name` only names it in errors ("failed to read host facts F: cpu.features:
// expected an array of strings"). Unknown keys are ignored; vendor spellings become NFD's ("AuthenticAMD"
// -> "AMD"), an absent vendor comes from the implementer, level and microarch are derived when absent.
[[nodiscard]] Result<HostFacts> parse_host_facts(std::string_view text, std::string_view file_name);
[[nodiscard]] Result<NvidiaFacts> parse_nvidia_facts(std::string_view text, std::string_view file_name);

// "13.0" from 13000 (cuDriverGetVersion, nvmlSystemGetCudaDriverVersion encoding).
[[nodiscard]] std::string cuda_version_text(int encoded);

}  // namespace hwimg::probe
