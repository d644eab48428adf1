#include "hwimg/hw/gpu_driver_floor.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>


namespace hwimg::hw {
namespace {

constexpr std::string_view floor_src_matrix =
    "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html";
constexpr std::string_view floor_src_features = "https://docs.nvidia.com/cuda/cuda-features-archive/index.html";
constexpr std::string_view floor_src_rubin = "https://github.com/NVIDIA/cutlass/releases/tag/v4.8.0dev";

// docs/compatibility.md#gpu-driver-floors: the branch of the first toolkit that supports the
// generation (Rubin: NVIDIA's own statement). Only generations above some major's minor-version
// floor are listed; Ampere and older run on every driver of CUDA 11 and newer.
constexpr std::array driver_floor_rows{
    GpuDriverFloor{{8, 9}, "Ada", 520, floor_src_matrix},
    GpuDriverFloor{{9, 0}, "Hopper", 520, floor_src_matrix},
    GpuDriverFloor{{10, 0}, "Blackwell", 570, floor_src_matrix},
    GpuDriverFloor{{10, 3}, "Blackwell Ultra", 575, floor_src_features},
    GpuDriverFloor{{10, 7}, "Rubin", 615, floor_src_rubin},
    GpuDriverFloor{{11, 0}, "Jetson Thor", 580, floor_src_features},
    GpuDriverFloor{{12, 0}, "Blackwell", 570, floor_src_matrix},
    GpuDriverFloor{{12, 1}, "GB10", 575, floor_src_features},
};

bool below_floor(const GpuDriverFloor& floor, const std::optional<CudaVersion>& host_cuda,
                 const std::optional<DriverVersion>& host_driver) {
  if (host_driver) {
    return host_driver->branch() < floor.branch;
  }
  return host_cuda && *host_cuda < floor.cuda();
}

// The host's side of a shortfall; without a driver version the CUDA version is known (below_floor).
std::string host_side(const std::optional<CudaVersion>& host_cuda, const std::optional<DriverVersion>& host_driver) {
  if (host_driver) {
    return fmt::format("host has {}", host_driver->str());
  }
  return fmt::format("host driver supports CUDA {}", host_cuda.value_or(CudaVersion{}).str());
}

}  // namespace

DriverVersion GpuDriverFloor::driver() const { return *DriverVersion::parse(std::to_string(branch)); }

CudaVersion GpuDriverFloor::cuda() const { return cuda_version_of_driver(driver()).value_or(CudaVersion{}); }

std::optional<GpuDriverFloor> gpu_driver_floor(ComputeCapability device) {
  const auto found = std::ranges::find(driver_floor_rows, device, &GpuDriverFloor::capability);
  return found == driver_floor_rows.end() ? std::nullopt : std::optional(*found);
}

std::vector<GpuFloorFailure> gpu_driver_floor_failures(std::span<const GpuDevice> gpus,
                                                       const std::optional<CudaVersion>& host_cuda,
                                                       const std::optional<DriverVersion>& host_driver) {
  std::vector<std::pair<GpuDriverFloor, std::vector<int>>> short_of;  // in host order
  for (const auto& gpu : gpus) {
    const auto floor = gpu_driver_floor(gpu.capability);
    if (!floor || !below_floor(*floor, host_cuda, host_driver)) {
      continue;
    }
    const auto same = std::ranges::find_if(
        short_of, [&](const auto& entry) { return entry.first.capability == gpu.capability; });
    if (same == short_of.end()) {
      short_of.push_back({*floor, {gpu.index}});
    } else {
      same->second.push_back(gpu.index);
    }
  }
  std::vector<GpuFloorFailure> failures;
  for (const auto& [floor, indexes] : short_of) {
    const bool one = indexes.size() == 1;
    failures.push_back({fmt::format("{} {} (compute capability {}, {}) {} driver >= {}{}; {}: upgrade the driver",
                                  one ? "GPU" : "GPUs", fmt::join(indexes, ", "), floor.capability.str(),
                                  floor.architecture, one ? "needs" : "need", floor.branch,
                                  host_driver ? std::string() : fmt::format(" (CUDA {})", floor.cuda().str()),
                                  host_side(host_cuda, host_driver)),
                        indexes});
  }
  return failures;
}

std::vector<FactSource> gpu_driver_floor_sources() {
  std::vector<FactSource> sources;
  for (const auto& row : driver_floor_rows) {
    sources.push_back({"GPU driver floors", row.capability.str(), row.source});
  }
  return sources;
}

}  // namespace hwimg::hw
