#pragma once
// The oldest driver branch that runs each GPU generation. For some it is above the minor-version
// floor of a toolkit major that builds code for them: CUDA 12.x runs from driver 525 on, but a
// Blackwell GPU needs R570 (docs/compatibility.md#gpu-driver-floors).

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/cuda_release.hpp"
#include "hwimg/hw/gpu_target.hpp"

namespace hwimg::hw {

struct GpuDriverFloor {
  ComputeCapability capability;
  std::string_view architecture;  // "Blackwell"
  int branch = 0;                 // no driver of an older branch runs this GPU
  std::string_view source;

  [[nodiscard]] DriverVersion driver() const;  // "570"
  [[nodiscard]] CudaVersion cuda() const;      // what the branch reports: 12.8 for 570
};

// Absent for generations every driver of a supported major runs (Turing, Ampere) and unknown ones.
[[nodiscard]] std::optional<GpuDriverFloor> gpu_driver_floor(ComputeCapability device);

struct GpuDevice {
  int index = 0;
  ComputeCapability capability;
};

struct GpuFloorFailure {
  std::string reason;
  std::vector<int> gpu_indexes;  // the GPUs it names
};

// One failure per generation whose floor the host's driver is below, naming its GPUs: "GPU 0
// (compute capability 10.0, Blackwell) needs driver >= 570; host has 560.35.03: upgrade the driver". Judged
// by the driver version when known, else by the CUDA version the host reports.
[[nodiscard]] std::vector<GpuFloorFailure> gpu_driver_floor_failures(std::span<const GpuDevice> gpus,
                                                                 const std::optional<CudaVersion>& host_cuda,
                                                                 const std::optional<DriverVersion>& host_driver);

// Every row of the floor table with the document it comes from.
[[nodiscard]] std::vector<FactSource> gpu_driver_floor_sources();

}  // namespace hwimg::hw
