#pragma once
// Builds one variant of a recipe into a layout: runs the build step, packs the layers, writes the
// image config and manifest. Layers that do not depend on the variant are packed once per run.

#include <filesystem>
#include <functional>
#include <optional>

#include "hwimg/build/base_image.hpp"
#include "hwimg/build/driver_bundle.hpp"
#include "hwimg/build/variant_plan.hpp"
#include "hwimg/oci/layer_writer.hpp"
#include "hwimg/util/output.hpp"
#include "hwimg/util/single_flight.hpp"

namespace hwimg::build {

enum class Verbosity { quiet, verbose };

// Where a registry base's layers go: into the layout, or nowhere (a build straight to a registry
// mounts them there instead of downloading them).
enum class BaseLayers { copied, left_in_registry };

struct BuildSettings {
  oci::CompressionOptions compression;
  std::int64_t source_date_epoch = 0;
  Verbosity verbosity = Verbosity::quiet;  // verbose: build steps' output goes to stderr as it comes
  util::Output* output = &util::null_output();
  BaseLayers base_layers = BaseLayers::copied;
  // What a build step on the host gets of hwimg's environment (commands::host_step_environment):
  // the step's HWIMG_* variables and SOURCE_DATE_EPOCH are added, nothing else is inherited.
  std::map<std::string, std::string> host_environment;
  // hwimg's whole environment, of which a step gets only what its recipe's build.pass_env names.
  std::map<std::string, std::string> invoking_environment;
};

// The variables of `names` that `settings.invoking_environment` has, for build.pass_env.
[[nodiscard]] std::map<std::string, std::string> passed_environment(const std::vector<std::string>& names,
                                                                    const BuildSettings& settings);

// Whether `base`'s layers stay out of the layout under `settings`.
[[nodiscard]] bool leaves_layers_remote(const BaseImage& base, const BuildSettings& settings);

struct BuiltVariant {
  std::string id;
  oci::Descriptor manifest;  // with platform and annotations, as the index lists it
  bool reused = false;       // unchanged since the last build into this layout
};

// Shares packed layers between variants of one build (same source, destination and settings).
class LayerMemo {
public:
  [[nodiscard]] Result<oci::WrittenLayer> get_or_pack(const std::string& key,
                                                      const std::function<Result<oci::WrittenLayer>()>& pack);
  // The driver's libraries, read and checked once for all variants that bundle it.
  [[nodiscard]] Result<std::vector<DriverLibrary>> driver_libraries(const DriverPlan& driver);
  // The driver's layer (write_driver_layer), packed once for all variants that bundle it.
  [[nodiscard]] Result<oci::WrittenLayer> driver_layer(const DriverPlan& driver, const std::vector<DriverLibrary>& libraries,
                                                       const oci::Layout& layout, const oci::LayerOptions& options);

private:
  // A failed pack fails every variant that shares the layer, without packing it again.
  util::SingleFlight<std::string, oci::WrittenLayer> m_layers{util::Keep::everything};
  util::SingleFlight<std::string, std::vector<DriverLibrary>> m_drivers{util::Keep::everything};
};

// The layout is created only after the build step and every check succeeded, so a bad recipe
// leaves nothing behind.
using LayoutProvider = std::function<Result<oci::Layout>()>;

class BuilderImages;
class DeviceCodeCheck;
class CpuCodeCheck;

// The checks of what a variant's code runs on, shared by the build's variants.
struct CodeChecks {
  DeviceCodeCheck& device;
  CpuCodeCheck& cpu;
};

// `base` is the plan's base as `bases` resolved it; its layers are taken from there. `builder` is
// the plan's builder image as `builders` resolved it, nullptr for a build step on the host. Its code
// is checked by `checks`.
[[nodiscard]] Result<BuiltVariant> build_variant(const VariantPlan& plan, const BaseImage& base, BaseResolver& bases,
                                                 const BaseImage* builder, BuilderImages& builders,
                                                 const BuildSettings& settings, const LayoutProvider& layout,
                                                 LayerMemo& memo, CodeChecks checks);

// Writes the variant's manifest (its config and layers set) with the variant's annotations, the
// recipe's, `created` and the base's name and digest; the descriptor the index lists.
[[nodiscard]] Result<BuiltVariant> store_variant_manifest(const VariantPlan& plan, const BaseImage& base,
                                                          oci::Manifest manifest, const oci::Layout& layout,
                                                          const BuildSettings& settings);

// RFC 3339 UTC time of a Unix timestamp, as image configs and annotations write it.
[[nodiscard]] std::string rfc3339(std::int64_t seconds);

}  // namespace hwimg::build
