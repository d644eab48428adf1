// docs/compatibility.md#gpu-driver-floors and the sources of every CUDA table row.

#include <algorithm>
#include <set>

#include <doctest/doctest.h>

#include "hwimg/hw/gpu_driver_floor.hpp"

using namespace hwimg::hw;

namespace {

DriverVersion drv(std::string_view text) { return DriverVersion::parse(text).value(); }

std::vector<std::string> failures(std::vector<GpuDevice> gpus, std::optional<CudaVersion> cuda,
                                  std::optional<DriverVersion> driver) {
  std::vector<std::string> reasons;
  for (const auto& failure : gpu_driver_floor_failures(gpus, cuda, driver)) {
    reasons.push_back(failure.reason);
  }
  return reasons;
}

}  // namespace

TEST_CASE("GPU generations and the first driver branch that runs them") {
  CHECK(gpu_driver_floor({9, 0})->branch == 520);
  CHECK(gpu_driver_floor({8, 9})->branch == 520);
  CHECK(gpu_driver_floor({10, 0})->branch == 570);
  CHECK(gpu_driver_floor({12, 0})->branch == 570);
  CHECK(gpu_driver_floor({10, 3})->branch == 575);
  CHECK(gpu_driver_floor({12, 1})->branch == 575);
  CHECK(gpu_driver_floor({11, 0})->branch == 580);
  CHECK(gpu_driver_floor({10, 7})->branch == 615);
  CHECK(gpu_driver_floor({10, 7})->architecture == "Rubin");
  CHECK(gpu_driver_floor({10, 0})->cuda() == CudaVersion{12, 8});
  CHECK(gpu_driver_floor({10, 7})->cuda() == CudaVersion{13, 4});
  CHECK(gpu_driver_floor({9, 0})->cuda() == CudaVersion{11, 8});
  // Every driver of CUDA 11 and newer runs Turing and Ampere.
  CHECK_FALSE(gpu_driver_floor({7, 5}).has_value());
  CHECK_FALSE(gpu_driver_floor({8, 0}).has_value());
  CHECK_FALSE(gpu_driver_floor({8, 6}).has_value());
}

TEST_CASE("each floor is the driver of the first toolkit that builds SASS for the generation") {
  for (const auto& source : gpu_driver_floor_sources()) {
    const auto cc = *parse_compute_capability(source.row);
    const auto floor = *gpu_driver_floor(cc);
    const GpuTarget sass{CodeKind::sass, cc, ArchFeatures::baseline};
    CAPTURE(source.row);
    CHECK(check_toolkit_supports(floor.cuda(), sass));
    if (const auto older = std::ranges::find(cuda_toolkit_versions(), floor.cuda());
        older != cuda_toolkit_versions().begin()) {
      CHECK_FALSE(check_toolkit_supports(*(older - 1), sass));
    }
  }
}

TEST_CASE("a host driver below a GPU's floor is named with what to do") {
  CHECK(failures({{0, {10, 0}}}, CudaVersion{12, 6}, drv("560.35.03")) ==
        std::vector<std::string>{"GPU 0 (compute capability 10.0, Blackwell) needs driver >= 570; host has "
                                 "560.35.03: upgrade the driver"});
  CHECK(failures({{0, {10, 7}}, {1, {9, 0}}, {2, {10, 7}}}, CudaVersion{13, 0}, drv("580.65.06")) ==
        std::vector<std::string>{"GPUs 0, 2 (compute capability 10.7, Rubin) need driver >= 615; host has "
                                 "580.65.06: upgrade the driver"});
  // Without a driver version, the CUDA version the host reports decides.
  CHECK(failures({{3, {12, 0}}}, CudaVersion{12, 6}, std::nullopt) ==
        std::vector<std::string>{"GPU 3 (compute capability 12.0, Blackwell) needs driver >= 570 (CUDA 12.8); host "
                                 "driver supports CUDA 12.6: upgrade the driver"});
  CHECK(failures({{0, {10, 0}}}, CudaVersion{12, 8}, std::nullopt).empty());
  CHECK(failures({{0, {10, 0}}}, std::nullopt, std::nullopt).empty());
  // Any build of the branch is enough, as NVIDIA states bare branches.
  CHECK(failures({{0, {10, 0}}, {1, {9, 0}}}, CudaVersion{12, 8}, drv("570.26")).empty());
  CHECK(failures({{0, {10, 7}}}, CudaVersion{13, 4}, drv("615.71.09")).empty());
  CHECK(failures({{0, {8, 0}}}, CudaVersion{11, 0}, drv("450.80.02")).empty());
}

TEST_CASE("every CUDA table row names its source") {
  std::vector<FactSource> sources = cuda_release_sources();
  for (auto list : {gpu_target_sources(), gpu_driver_floor_sources()}) {
    std::ranges::move(list, std::back_inserter(sources));
  }
  std::set<std::string_view> tables;
  for (const auto& source : sources) {
    CAPTURE(source.table);
    CAPTURE(source.row);
    CHECK(source.source.starts_with("https://"));
    CHECK(source.source.find(' ') == std::string_view::npos);
    tables.insert(source.table);
  }
  CHECK(tables == std::set<std::string_view>{"toolkit drivers", "driver branches", "minor-version compatibility",
                                             "GPU targets by toolkit", "GPU families", "GPU driver floors"});
  // One row per toolkit, per driver branch, per target (sm_ and compute_ spellings share a row).
  CHECK(std::ranges::count(sources, std::string_view("toolkit drivers"), &FactSource::table) ==
        static_cast<std::ptrdiff_t>(cuda_toolkit_versions().size()));
  CHECK(std::ranges::count(sources, std::string_view("GPU targets by toolkit"), &FactSource::table) ==
        static_cast<std::ptrdiff_t>(gpu_target_names().size() / 2));
}
