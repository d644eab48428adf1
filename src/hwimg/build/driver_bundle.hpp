#pragma once
// A user-mode NVIDIA driver bundled into a variant (docs/recipe.md#bundled-driver): the libraries
// NVIDIA's container toolkit would mount from the host for the `compute` and `utility`
// capabilities, read from a directory, checked to be exactly the matrix's driver version, and
// packed as one layer with their soname links, so the image runs with the GPU device nodes alone
// on a node whose kernel driver is that version (docs/compatibility.md#user-mode-driver-libraries).

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hwimg/hw/cuda_release.hpp"
#include "hwimg/matrix/variant.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/layer_writer.hpp"
#include "hwimg/oci/layout.hpp"
#include "hwimg/recipe/recipe.hpp"
#include "hwimg/recipe/variables.hpp"

namespace hwimg::build {

struct DriverPlan {
  hw::DriverVersion version;
  std::filesystem::path from;  // absolute
  std::string to;              // the library directory in the image, absolute
  recipe::SourceLocation from_location;
};

// A variant the matrix gives a driver needs the recipe's `driver:`; a `from` that names no
// variable is the same for every driver, which cannot hold two versions, so with several drivers it
// must use ${driver.version} or ${driver.branch} (one driver may come from a fixed place, such as
// the build machine's own /usr/lib/x86_64-linux-gnu). Checked for all variants before any is built, so the
// variants without a driver do not store their blobs first (docs/recipe.md: a mistake leaves
// nothing behind).
[[nodiscard]] Result<void> check_driver_recipe(const recipe::Recipe& recipe, std::span<const matrix::Variant> variants);

// The recipe's `driver:` for `variant` (check_driver_recipe holds): none for a variant without a
// bundled driver.
[[nodiscard]] Result<std::optional<DriverPlan>> plan_driver(const recipe::Recipe& recipe, const matrix::Variant& variant,
                                                            const recipe::Variables& variables);

struct DriverLibrary {
  std::filesystem::path file;  // in DriverPlan::from: "libcuda.so.535.247.01"
  std::string soname;          // "libcuda.so.1"; empty when the file declares none
};

// The driver libraries in `plan.from`, each of `plan.version`: by its file name, as NVIDIA's
// toolkit selects them, and for libcuda also by the version string it carries. A library of
// another version, or a directory without libcuda and libnvidia-ml, is refused naming the file.
[[nodiscard]] Result<std::vector<DriverLibrary>> read_driver_libraries(const DriverPlan& plan);

// What `hwimg build --explain` says of the driver's layer.
[[nodiscard]] std::string explain_driver(const DriverPlan& plan);

// The history entry of the driver's layer.
[[nodiscard]] std::string driver_layer_created_by(const DriverPlan& plan);

// One layer: the libraries under `plan.to` with their soname links (and libcuda.so), and
// /etc/ld.so.conf.d/000-hwimg-nvidia-driver.conf naming `plan.to`.
[[nodiscard]] Result<oci::WrittenLayer> write_driver_layer(const DriverPlan& plan,
                                                           const std::vector<DriverLibrary>& libraries,
                                                           const oci::Layout& layout, const oci::LayerOptions& options);

// What a bundled driver changes in the config: `plan.to` first on LD_LIBRARY_PATH (the base's
// ld.so.cache does not list it) and NVIDIA_VISIBLE_DEVICES=void, which makes NVIDIA's toolkit
// leave the container alone instead of mounting the host's driver over the bundled one.
void apply_driver_config(const DriverPlan& plan, oci::ImageConfig& config);

// The variables apply_driver_config sets, given the base's LD_LIBRARY_PATH (if any).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> driver_environment(
    const DriverPlan& plan, const std::optional<std::string>& ld_library_path);

}  // namespace hwimg::build
