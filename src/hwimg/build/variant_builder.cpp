#include "hwimg/build/variant_builder.hpp"

#include <algorithm>
#include <ctime>

#include <unistd.h>

#include "hwimg/build/builder_image.hpp"
#include "hwimg/build/architecture_check.hpp"
#include "hwimg/build/cpu_code_check.hpp"
#include "hwimg/build/device_code_check.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/process.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

std::string rfc3339(std::int64_t seconds) {
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

Result<oci::WrittenLayer> LayerMemo::get_or_pack(const std::string& key,
                                                 const std::function<Result<oci::WrittenLayer>()>& pack) {
  return m_layers.get(key, pack);
}

Result<std::vector<DriverLibrary>> LayerMemo::driver_libraries(const DriverPlan& driver) {
  return m_drivers.get(driver.from.string() + "\n" + driver.version.str(), [&] { return read_driver_libraries(driver); });
}

Result<oci::WrittenLayer> LayerMemo::driver_layer(const DriverPlan& driver, const std::vector<DriverLibrary>& libraries,
                                                  const oci::Layout& layout, const oci::LayerOptions& options) {
  return get_or_pack(fmt::format("driver\n{}\n{}\n{}", driver.from.string(), driver.to, driver.version.str()),
                     [&] { return write_driver_layer(driver, libraries, layout, options); });
}

namespace {

// On the host, or in the builder image when the plan names one.
Result<void> run_build_step(const VariantPlan& plan, const BaseImage* builder, BuilderImages& builders,
                            const BuildSettings& settings) {
  const auto& step = *plan.build;
  std::error_code ec;
  if (!fs::is_directory(step.workdir, ec)) {
    return fail("{}: build workdir {} is not a directory", step.workdir_location.str(), step.workdir.string());
  }
  util::ProcessResult result;
  if (builder != nullptr) {
    HWIMG_TRY_ASSIGN(result, with_context(builders.run_step(plan, *builder, settings), step.image_location.str()));
  } else {
    util::ProcessSpec spec;
    spec.argv = {"/bin/sh", "-ec", step.run};
    spec.working_directory = step.workdir;
    // A clean environment (docs/recipe.md): no credential such as DOCKER_AUTH_CONFIG reaches
    // the recipe's commands unless the recipe passes it itself.
    spec.parent_environment = util::ParentEnvironment::none;
    spec.environment = settings.host_environment;
    for (const auto& [name, value] : passed_environment(step.pass_env, settings)) spec.environment[name] = value;
    for (const auto& [name, value] : step.environment) spec.environment[name] = value;
    spec.environment["SOURCE_DATE_EPOCH"] = std::to_string(settings.source_date_epoch);
    spec.echo_output = settings.verbosity == Verbosity::verbose;
    HWIMG_TRY_ASSIGN(result, with_context(util::run_process(spec), step.run_location.str()));
  }
  if (result.exit_status != 0) {
    std::string tail;
    for (const auto& line : util::split(util::tail_lines(result.output, 15), '\n')) {
      tail += "\n  | " + line;
    }
    return fail("{}: build step of variant {} failed with exit status {}{}", step.run_location.str(), plan.id(),
                result.exit_status, result.output.empty() ? " and no output" : "; its last output:" + tail);
  }
  return {};
}

// Applies the recipe's config over the base image's.
oci::ImageConfig make_config(const VariantPlan& plan, const BaseImage& base, const std::string& created) {
  const auto& variant = *plan.variant;
  const auto& spec = plan.config;
  oci::ImageConfig config = base.config;
  config.os = variant.platform.os;
  config.architecture = variant.platform.architecture;
  config.variant = variant.platform.variant;
  config.created = created;
  if (spec.entrypoint) {
    config.entrypoint = *spec.entrypoint;
    // As in Docker, a new entrypoint drops the base image's default arguments.
    if (!spec.cmd) config.cmd.reset();
  }
  if (spec.cmd) config.cmd = *spec.cmd;
  for (const auto& [name, value] : spec.env) config.set_env(name, value);
  if (!variant.nvidia_require_cuda.empty()) {
    config.set_env("NVIDIA_REQUIRE_CUDA", variant.nvidia_require_cuda);
  }
  for (const auto& [name, value] : spec.labels) config.labels[name] = value;
  for (const auto& [name, value] : variant.annotations) config.labels[name] = value;
  if (spec.workdir) config.working_dir = *spec.workdir;
  if (spec.user) config.user = *spec.user;
  if (spec.stop_signal) config.stop_signal = *spec.stop_signal;
  for (const auto& port : spec.exposed_ports) config.exposed_ports.push_back(port);
  return config;
}

// Every layer source must exist after the build step, and every destination be a clean image path.
Result<void> check_layers(const VariantPlan& plan) {
  for (const auto& layer : plan.layers) {
    std::error_code ec;
    if (!fs::exists(layer.from, ec)) {
      return fail("{}: layer source {} does not exist{}", layer.from_location.str(), layer.from.string(),
                  layer.from_build_output ? " (the build step did not create it)" : "");
    }
    if (auto normalized = oci::normalize_image_path(layer.to); !normalized) {
      return fail("{}: layer destination {}", layer.to_location.str(), normalized.error().message);
    }
  }
  return {};
}

}  // namespace

std::map<std::string, std::string> passed_environment(const std::vector<std::string>& names,
                                                      const BuildSettings& settings) {
  std::map<std::string, std::string> passed;
  for (const auto& name : names) {
    if (const auto found = settings.invoking_environment.find(name); found != settings.invoking_environment.end()) {
      passed.emplace(name, found->second);
    }
  }
  return passed;
}

bool leaves_layers_remote(const BaseImage& base, const BuildSettings& settings) {
  return settings.base_layers == BaseLayers::left_in_registry && base.source &&
         base.source->kind == image::SourceKind::registry;
}

Result<BuiltVariant> build_variant(const VariantPlan& plan, const BaseImage& base, BaseResolver& bases,
                                   const BaseImage* builder, BuilderImages& builders, const BuildSettings& settings,
                                   const LayoutProvider& layout_provider, LayerMemo& memo,
                                   CodeChecks checks) {
  const auto& variant = *plan.variant;
  const auto context = fmt::format("failed to build variant {}", variant.id);
  HWIMG_TRY(util::make_directories(plan.out));
  std::vector<fs::path> base_files;
  if (!leaves_layers_remote(base, settings)) {
    HWIMG_TRY_ASSIGN(base_files, with_context(bases.layer_files(base), plan.base_location.str()));
  }
  if (plan.build) {
    HWIMG_TRY(run_build_step(plan, builder, builders, settings));
  }
  HWIMG_TRY(check_layers(plan));
  HWIMG_TRY(check_architecture(plan));
  HWIMG_TRY(checks.cpu.check(plan, base, base_files, *settings.output));
  if (variant.uses_gpu()) {
    HWIMG_TRY(checks.device.check(plan, base, base_files));
  }

  std::vector<DriverLibrary> driver_libraries;
  if (plan.driver) {
    HWIMG_TRY_ASSIGN(driver_libraries, with_context(memo.driver_libraries(*plan.driver), context));
  }

  HWIMG_TRY_ASSIGN(const auto layout, layout_provider());
  if (!leaves_layers_remote(base, settings)) HWIMG_TRY(import_base_layers(base, base_files, layout));

  const auto created = rfc3339(settings.source_date_epoch);
  oci::LayerOptions layer_options{settings.compression, settings.source_date_epoch};
  oci::Manifest manifest;
  manifest.layers = base.layers;
  auto config = make_config(plan, base, created);
  for (const auto& layer : plan.layers) {
    const oci::LayerSource source{layer.from, layer.to};
    const auto pack = [&] { return oci::write_layer(layout, {source}, layer_options); };
    HWIMG_TRY_ASSIGN(const auto written,
                     with_context(layer.variant_specific ? pack() : memo.get_or_pack(source.from.string() + "\n" + source.to, pack),
                                  context));
    manifest.layers.push_back(written.descriptor);
    config.diff_ids.push_back(written.diff_id);
    config.history.push_back({created, fmt::format("hwimg build: {} -> {}", source.from.filename().string(), source.to),
                              {}, false});
  }
  if (const auto& driver = plan.driver) {
    HWIMG_TRY_ASSIGN(const auto written,
                     with_context(memo.driver_layer(*driver, driver_libraries, layout, layer_options), context));
    manifest.layers.push_back(written.descriptor);
    config.diff_ids.push_back(written.diff_id);
    config.history.push_back({created, driver_layer_created_by(*driver), {}, false});
    apply_driver_config(*driver, config);
  }
  HWIMG_TRY_ASSIGN(manifest.config,
                   with_context(layout.put_blob(oci::to_json(config), oci::media_type::config), context));
  return with_context(store_variant_manifest(plan, base, std::move(manifest), layout, settings), context);
}

Result<BuiltVariant> store_variant_manifest(const VariantPlan& plan, const BaseImage& base, oci::Manifest manifest,
                                            const oci::Layout& layout, const BuildSettings& settings) {
  const auto& variant = *plan.variant;
  manifest.annotations = variant.annotations;
  manifest.annotations[std::string(oci::annotation::created)] = rfc3339(settings.source_date_epoch);
  for (const auto& [name, value] : plan.annotations) manifest.annotations[name] = value;
  if (!base.is_scratch()) {
    manifest.annotations[std::string(oci::annotation::base_digest)] = base.manifest_descriptor.digest.str();
    manifest.annotations[std::string(oci::annotation::base_name)] = base.name;
  }
  HWIMG_TRY_ASSIGN(auto descriptor, layout.put_blob(oci::to_json(manifest), oci::media_type::manifest));
  descriptor.platform = variant.platform;
  descriptor.annotations = variant.annotations;
  return BuiltVariant{variant.id, std::move(descriptor)};
}

}  // namespace hwimg::build
