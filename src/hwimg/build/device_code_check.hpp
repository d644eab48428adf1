#pragma once
// The builder's check of a GPU variant's device code over every layer it gets
// (docs/recipe.md#device-code): its own layers must hold exactly what it declares; the layers it
// shares with other variants, and its base's layers, must run on every GPU its declarations do.
// Each shared layer and each base layer digest is read once per build, whichever variants use it.

#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hwimg/build/base_image.hpp"
#include "hwimg/build/variant_plan.hpp"
#include "hwimg/hw/fatbin_check.hpp"
#include "hwimg/util/single_flight.hpp"

namespace hwimg::build {

using SharedScan = std::shared_ptr<const hw::DeviceCodeScan>;

class DeviceCodeCheck {
public:
  // `base_files` are the files of `base.layers`, in order; empty when the base's layers stay in
  // their registry (a build straight to a registry), which are then not read.
  [[nodiscard]] Result<void> check(const VariantPlan& plan, const BaseImage& base,
                                   std::span<const std::filesystem::path> base_files);

private:
  [[nodiscard]] Result<SharedScan> scan_once(const std::string& key, const std::function<Result<hw::DeviceCodeScan>()>& scan);

  // A file that would not read fails every variant that shares it, without reading it again.
  util::SingleFlight<std::string, SharedScan> m_scans{util::Keep::everything};
};

// The device code of a layer blob: each wanted file read from the tar, named "/PATH in layer NAME"
// (the layer's digest, and for a layer a Dockerfile added also the instruction that made it).
[[nodiscard]] Result<hw::DeviceCodeScan> scan_layer_blob(const std::filesystem::path& blob, std::string_view layer_name);

// Compute capabilities (the lowest of each stretch) that `declared` runs on and `have` does not.
[[nodiscard]] std::vector<hw::ComputeCapability> unserved_capabilities(std::span<const hw::GpuTarget> declared,
                                                                       std::span<const hw::GpuTarget> have);

}  // namespace hwimg::build
