#include "hwimg/build/variant_builder.hpp"

#include <algorithm>
#include <ctime>

#include <unistd.h>

#include "hwimg/hw/fatbin_check.hpp"
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
  std::promise<Result<oci::WrittenLayer>> promise;
  std::shared_future<Result<oci::WrittenLayer>> future;
  bool owner = false;
  {
    std::lock_guard lock(m_mutex);
    if (const auto it = m_layers.find(key); it != m_layers.end()) {
      future = it->second;
    } else {
      future = promise.get_future().share();
      m_layers.emplace(key, future);
      owner = true;
    }
  }
  if (owner) {
    promise.set_value(pack());
  }
  return future.get();
}

namespace {

Result<void> run_build_step(const recipe::Recipe& recipe, const matrix::Variant& variant,
                            const recipe::Variables& variables, const BuildSettings& settings) {
  const auto& step = *recipe.build;
  auto run = recipe::substitute(step.run, variables);
  if (!run) return std::unexpected(run.error());
  auto workdir_text = recipe::substitute(step.workdir, variables);
  if (!workdir_text) return std::unexpected(workdir_text.error());
  const auto workdir = recipe.resolve(*workdir_text);
  std::error_code ec;
  if (!fs::is_directory(workdir, ec)) {
    return fail("{}: build workdir {} is not a directory", step.workdir.location.str(), workdir.string());
  }
  util::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-ec", *run};
  spec.working_directory = workdir;
  spec.environment = matrix::build_environment(variant, variables.at("out"));
  spec.environment["SOURCE_DATE_EPOCH"] = std::to_string(settings.source_date_epoch);
  spec.echo_output = settings.verbosity == Verbosity::verbose;
  auto result = util::run_process(spec);
  if (!result) return std::unexpected(result.error().context(step.run.location.str()));
  if (result->exit_status != 0) {
    std::string tail;
    for (const auto& line : util::split(util::tail_lines(result->output, 15), '\n')) {
      tail += "\n  | " + line;
    }
    return fail("{}: build step of variant {} failed with exit status {}{}", step.run.location.str(), variant.id,
                result->exit_status, result->output.empty() ? " and no output" : "; its last output:" + tail);
  }
  return {};
}

// Applies the recipe's config over the base image's.
Result<oci::ImageConfig> make_config(const recipe::Recipe& recipe, const matrix::Variant& variant, const BaseImage& base,
                                     const recipe::Variables& variables, const std::string& created) {
  oci::ImageConfig config = base.config;
  config.os = variant.platform.os;
  config.architecture = variant.platform.architecture;
  config.variant = variant.platform.variant;
  config.created = created;
  const auto& spec = recipe.config;
  const auto substitute_list = [&](const std::vector<recipe::LocatedString>& list) -> Result<std::vector<std::string>> {
    std::vector<std::string> out;
    for (const auto& item : list) {
      auto value = recipe::substitute(item, variables);
      if (!value) return std::unexpected(value.error());
      out.push_back(std::move(*value));
    }
    return out;
  };
  if (spec.entrypoint) {
    auto entrypoint = substitute_list(*spec.entrypoint);
    if (!entrypoint) return std::unexpected(entrypoint.error());
    config.entrypoint = std::move(*entrypoint);
    // As in Docker, a new entrypoint drops the base image's default arguments.
    if (!spec.cmd) config.cmd.reset();
  }
  if (spec.cmd) {
    auto cmd = substitute_list(*spec.cmd);
    if (!cmd) return std::unexpected(cmd.error());
    config.cmd = std::move(*cmd);
  }
  for (const auto& [name, value] : spec.env) {
    auto text = recipe::substitute(value, variables);
    if (!text) return std::unexpected(text.error());
    config.set_env(name, *text);
  }
  if (!variant.nvidia_require_cuda.empty()) {
    config.set_env("NVIDIA_REQUIRE_CUDA", variant.nvidia_require_cuda);
  }
  for (const auto& [name, value] : spec.labels) {
    auto text = recipe::substitute(value, variables);
    if (!text) return std::unexpected(text.error());
    config.labels[name] = *text;
  }
  for (const auto& [name, value] : variant.annotations) {
    config.labels[name] = value;
  }
  const auto set_optional = [&](const std::optional<recipe::LocatedString>& item, std::string& field) -> Result<void> {
    if (!item) return {};
    auto text = recipe::substitute(*item, variables);
    if (!text) return std::unexpected(text.error());
    field = std::move(*text);
    return {};
  };
  HWIMG_TRY(set_optional(spec.workdir, config.working_dir));
  HWIMG_TRY(set_optional(spec.user, config.user));
  HWIMG_TRY(set_optional(spec.stop_signal, config.stop_signal));
  for (const auto& port : spec.exposed_ports) {
    config.exposed_ports.push_back(port.value);
  }
  return config;
}

struct PlannedLayer {
  oci::LayerSource source;
  bool variant_specific;
};

std::vector<fs::path> planned_sources(const std::vector<PlannedLayer>& planned) {
  std::vector<fs::path> sources;
  for (const auto& layer : planned) {
    if (layer.variant_specific) sources.push_back(layer.source.from);
  }
  return sources;
}

// The device code the variant's own layers embed must be exactly what it declares and is labelled with.
Result<void> check_device_code(const matrix::Variant& variant, const std::vector<fs::path>& sources) {
  std::vector<hw::GpuTarget> found;
  for (const auto& source : sources) {
    auto scan = hw::scan_device_code(source);
    if (!scan) return std::unexpected(scan.error().context(fmt::format("failed to check variant {}", variant.id)));
    found.insert(found.end(), scan->targets.begin(), scan->targets.end());
  }
  std::ranges::sort(found);
  const auto [first, last] = std::ranges::unique(found);
  found.erase(first, last);
  return hw::check_device_code(variant.id, variant.gpu_targets, found);
}

}  // namespace

Result<BuiltVariant> build_variant(const recipe::Recipe& recipe, const matrix::Variant& variant, const BuildSettings& settings,
                                   const LayoutProvider& layout_provider, LayerMemo& memo) {
  const auto context = fmt::format("failed to build variant {}", variant.id);
  auto scratch = util::TempDir::create(fs::temp_directory_path(), fmt::format("hwimg-build-{}-", ::getpid()));
  if (!scratch) return std::unexpected(scratch.error().context(context));
  const auto out_dir = scratch->path() / "out";
  HWIMG_TRY(util::make_directories(out_dir));
  const recipe::Variables variables = matrix::build_variables(variant, out_dir);

  auto base_reference = recipe::substitute(recipe.base, variables);
  if (!base_reference) return std::unexpected(base_reference.error());
  auto base = resolve_base(*base_reference, recipe, variant.platform);
  if (!base) return std::unexpected(base.error().context(recipe.base.location.str()));

  if (recipe.build) {
    HWIMG_TRY(run_build_step(recipe, variant, variables, settings));
  }

  std::vector<PlannedLayer> planned;
  for (const auto& layer : recipe.layers) {
    auto from_text = recipe::substitute(layer.from, variables);
    if (!from_text) return std::unexpected(from_text.error());
    auto to_text = recipe::substitute(layer.to, variables);
    if (!to_text) return std::unexpected(to_text.error());
    const auto from = recipe.resolve(*from_text);
    std::error_code ec;
    if (!fs::exists(from, ec)) {
      return fail("{}: layer source {} does not exist{}", layer.from.location.str(), from.string(),
                  from.string().starts_with(out_dir.string()) ? " (the build step did not create it)" : "");
    }
    if (auto normalized = oci::normalize_image_path(*to_text); !normalized) {
      return fail("{}: layer destination {}", layer.to.location.str(), normalized.error().message);
    }
    const bool variant_specific = from.string().starts_with(scratch->path().string()) ||
                                  *from_text != layer.from.value;
    planned.push_back({{from, *to_text}, variant_specific});
  }

  if (variant.uses_gpu()) {
    HWIMG_TRY(check_device_code(variant, planned_sources(planned)));
  }

  auto layout = layout_provider();
  if (!layout) return std::unexpected(layout.error());
  HWIMG_TRY(import_base_layers(*base, *layout));

  const auto created = rfc3339(settings.source_date_epoch);
  oci::LayerOptions layer_options{settings.compression, settings.source_date_epoch};
  oci::Manifest manifest;
  manifest.layers = base->layers;
  auto config = make_config(recipe, variant, *base, variables, created);
  if (!config) return std::unexpected(config.error());
  for (const auto& layer : planned) {
    const auto pack = [&] { return oci::write_layer(*layout, {layer.source}, layer_options); };
    auto written = layer.variant_specific
                       ? pack()
                       : memo.get_or_pack(layer.source.from.string() + "\n" + layer.source.to, pack);
    if (!written) return std::unexpected(written.error().context(context));
    manifest.layers.push_back(written->descriptor);
    config->diff_ids.push_back(written->diff_id);
    config->history.push_back({created, fmt::format("hwimg build: {} -> {}", layer.source.from.filename().string(),
                                                    layer.source.to),
                               {}, false});
  }
  auto config_descriptor = layout->put_blob(oci::to_json(*config), oci::media_type::config);
  if (!config_descriptor) return std::unexpected(config_descriptor.error().context(context));
  manifest.config = *config_descriptor;
  manifest.annotations = variant.annotations;
  manifest.annotations["org.opencontainers.image.created"] = created;
  for (const auto& [name, value] : recipe.annotations) {
    auto text = recipe::substitute(value, variables);
    if (!text) return std::unexpected(text.error());
    manifest.annotations[name] = *text;
  }
  if (base->layout) {
    manifest.annotations["org.opencontainers.image.base.digest"] = base->manifest_descriptor.digest.str();
    manifest.annotations["org.opencontainers.image.base.name"] = base->reference;
  }
  auto manifest_descriptor = layout->put_blob(oci::to_json(manifest), oci::media_type::manifest);
  if (!manifest_descriptor) return std::unexpected(manifest_descriptor.error().context(context));
  manifest_descriptor->platform = variant.platform;
  manifest_descriptor->annotations = variant.annotations;
  return BuiltVariant{variant.id, *manifest_descriptor};
}

}  // namespace hwimg::build
