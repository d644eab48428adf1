#include "hwimg/build/dockerfile_variant.hpp"

#include <algorithm>
#include <map>

#include "hwimg/build/cpu_code_check.hpp"
#include "hwimg/build/device_code_check.hpp"
#include "hwimg/image/overlay_xattr_filter.hpp"
#include "hwimg/image/uncompressed_blob.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/util/json_reader.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;
namespace json = util::json;

namespace {

// What buildah wrote: its manifest, its config as parsed and as JSON (hwimg edits the JSON, so
// whatever the Dockerfile set that hwimg does not model, HEALTHCHECK or SHELL, stays).
struct BuildahImage {
  oci::Layout layout;
  oci::Manifest manifest;
  oci::ImageConfig config;
  json::Json config_json;
};

Result<BuildahImage> read_buildah_image(const fs::path& directory) {
  HWIMG_TRY_ASSIGN(auto layout, oci::Layout::open(directory));
  HWIMG_TRY_ASSIGN(const auto descriptor, layout.resolve(buildah_image_name));
  HWIMG_TRY_ASSIGN(const auto manifest_text, layout.read_blob(descriptor));
  HWIMG_TRY_ASSIGN(auto manifest, oci::parse_manifest(manifest_text));
  HWIMG_TRY_ASSIGN(const auto config_text, layout.read_blob(manifest.config));
  HWIMG_TRY_ASSIGN(auto config, oci::parse_image_config(config_text));
  auto config_json = json::parse_object(config_text);
  if (!config_json) return fail("its config {} is not a JSON object", manifest.config.digest.str());
  if (manifest.layers.size() != config.diff_ids.size()) {
    return fail("its manifest has {} layers and its config {} diff_ids", manifest.layers.size(), config.diff_ids.size());
  }
  return BuildahImage{std::move(layout), std::move(manifest), std::move(config), std::move(*config_json)};
}

// An OCI layout holding an empty file named after each of the base's diff_ids: buildah's push
// then skips those layers (Buildah::push), which hwimg replaces by the base's own blobs anyway,
// instead of exporting the base's whole file system once per variant.
Result<void> seed_base_layers(const fs::path& directory, const BaseImage& base) {
  HWIMG_TRY(util::make_directories(directory / "blobs" / "sha256"));
  HWIMG_TRY(util::write_file_atomic(directory / "oci-layout", R"({"imageLayoutVersion":"1.0.0"})"));
  for (const auto& diff_id : base.config.diff_ids) {
    HWIMG_TRY(util::write_file_atomic(directory / "blobs" / "sha256" / diff_id.hex(), ""));
  }
  return {};
}

// The instruction of each layer, from the history entries that made one.
std::vector<std::string> layer_instructions(const oci::ImageConfig& config) {
  std::vector<std::string> made;
  for (const auto& entry : config.history) {
    if (entry.empty_layer) continue;
    auto text = entry.created_by;
    if (const auto nop = text.find("#(nop) "); nop != std::string::npos) text.erase(0, nop + 7);
    made.push_back(std::string(util::trim(text)));
  }
  return made;
}

// NAME=VALUE last in `env`, every earlier NAME= entry dropped.
void put_env(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  std::erase_if(env, [&](const std::string& entry) { return entry.starts_with(name + "="); });
  env.push_back(name + "=" + value);
}

// The config with the variant's labels and NVIDIA_REQUIRE_CUDA. Labels that describe some other
// hwimg variant (inherited from a base hwimg built) are dropped first: they would be false here.
Result<std::string> labelled_config(json::Json config, const matrix::Variant& variant) {
  config["architecture"] = variant.platform.architecture;
  config["os"] = variant.platform.os;
  if (variant.platform.variant.empty()) {
    config.erase("variant");
  } else {
    config["variant"] = variant.platform.variant;
  }
  HWIMG_TRY_ASSIGN(const auto* container, json::member(config, "config", json::Kind::object));
  json::Json settings = container != nullptr ? *container : json::Json::object();
  HWIMG_TRY_ASSIGN(const auto* labels_found, json::member(settings, "Labels", json::Kind::object));
  json::Json labels = labels_found != nullptr ? *labels_found : json::Json::object();
  for (auto it = labels.begin(); it != labels.end();) {
    it = it.key().starts_with(oci::annotation::hwimg_prefix) ? labels.erase(it) : std::next(it);
  }
  for (const auto& [name, value] : variant.annotations) labels[name] = value;
  settings["Labels"] = labels;
  if (!variant.nvidia_require_cuda.empty()) {
    HWIMG_TRY_ASSIGN(auto env, json::strings_member(settings, "Env"));
    auto entries = env.value_or(std::vector<std::string>{});
    put_env(entries, "NVIDIA_REQUIRE_CUDA", variant.nvidia_require_cuda);
    settings["Env"] = entries;
  }
  config["config"] = settings;
  return config.dump();
}

// A layer of buildah's into the layout: its tar as built (the diff_id checked), less the overlayfs
// xattrs rootless buildah leaves in (OverlayXattrFilter), compressed as the build asks. buildah may
// hand over a blob it compressed itself, or not, depending on what its blob cache remembers;
// compressing the tar here makes the digest depend on the inputs alone.
Result<oci::WrittenLayer> store_layer(const oci::Layout& staging, const oci::Descriptor& layer, const oci::Digest& diff_id,
                                      const oci::Layout& layout, const BuildSettings& settings) {
  HWIMG_TRY_ASSIGN(auto writer, oci::LayerBlobWriter::create(layout, settings.compression));
  oci::Sha256 built;
  image::OverlayXattrFilter filter([&](std::string_view bytes) { return writer.write(bytes); });
  HWIMG_TRY(image::read_uncompressed_blob(staging.blob_path(layer.digest), layer.digest.str(),
                                          [&](std::string_view bytes) {
                                            built.update(bytes);
                                            return filter.write(bytes);
                                          }));
  HWIMG_TRY(with_context(filter.finish(), "failed to read layer " + layer.digest.str()));
  if (const auto content = built.finish(); content != diff_id) {
    return fail("layer {} does not match its diff_id: the config says {}, its content is {} (digest mismatch)",
                layer.digest.str(), diff_id.str(), content.str());
  }
  HWIMG_TRY_ASSIGN(auto written, writer.finish());
  if (!filter.dropped().empty()) {
    settings.output->log(fmt::format("layer {}: took out the overlayfs xattrs buildah's rootless storage left in: {}",
                                     diff_id.str(), util::join_at_most(filter.dropped(), "; ", 8)));
  }
  return written;
}

// "FROM 3983f310154e": buildah's note that a step started from the image the step before it
// committed, named by its ID in this machine's storage.
bool names_intermediate_image(std::string_view comment) {
  if (!comment.starts_with("FROM ")) return false;
  const auto id = comment.substr(5);
  return id.size() >= 12 && id.size() <= 64 &&
         std::ranges::all_of(id, [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The config buildah wrote, less what depends on the storage it was built in rather than on the
// inputs: the diff_ids of the layers store_layer changed, and the history comments that name
// intermediate images (whose IDs change with those diff_ids, and with what the cache held). So
// the same inputs give the same config as root and rootless.
Result<json::Json> portable_config(json::Json config, const std::map<std::size_t, oci::Digest>& changed) {
  if (!changed.empty()) {
    HWIMG_TRY_ASSIGN(const auto* rootfs, json::member(config, "rootfs", json::Kind::object));
    if (rootfs == nullptr) return fail("its config has no rootfs");
    json::Json root = *rootfs;
    HWIMG_TRY_ASSIGN(auto diff_ids, json::strings_member(root, "diff_ids"));
    auto ids = diff_ids.value_or(std::vector<std::string>{});
    for (const auto& [index, diff_id] : changed) {
      if (index >= ids.size()) return fail("its config has {} diff_ids, not {}", ids.size(), index + 1);
      ids[index] = diff_id.str();
    }
    root["diff_ids"] = ids;
    config["rootfs"] = root;
  }
  HWIMG_TRY_ASSIGN(const auto* history_found, json::member(config, "history", json::Kind::array));
  if (history_found == nullptr) return config;
  json::Json history = *history_found;
  for (auto& entry : history) {
    if (!entry.is_object()) continue;
    HWIMG_TRY_ASSIGN(const auto comment, json::string_member(entry, "comment"));
    if (comment && names_intermediate_image(*comment)) entry.erase("comment");
  }
  config["history"] = history;
  return config;
}

// The config with Docker's own settings that `buildah push` left out of the OCI config (HEALTHCHECK,
// ONBUILD, SHELL), where Docker writes them in an OCI config too (moby/docker-image-spec,
// DockerOCIImageConfigExt); `extension` is Buildah::docker_config_extension's object.
Result<json::Json> with_docker_extension(json::Json config, const std::string& extension) {
  const auto fields = json::parse_object(extension);
  if (!fields) return fail("buildah's Docker settings are not a JSON object");
  if (fields->empty()) return config;
  HWIMG_TRY_ASSIGN(const auto* container, json::member(config, "config", json::Kind::object));
  json::Json settings = container != nullptr ? *container : json::Json::object();
  for (const auto& [name, value] : fields->items()) settings[name] = value;
  config["config"] = settings;
  return config;
}

// The bundled driver's layer on top of what buildah built: its diff_id and history entry, and the
// environment that makes the image use it (apply_driver_config's, on the config as JSON).
Result<json::Json> with_driver(json::Json config, const DriverPlan& driver, const oci::WrittenLayer& layer,
                               const std::string& created) {
  HWIMG_TRY_ASSIGN(const auto* rootfs, json::member(config, "rootfs", json::Kind::object));
  json::Json root = rootfs != nullptr ? *rootfs : json::Json::object();
  HWIMG_TRY_ASSIGN(auto diff_ids, json::strings_member(root, "diff_ids"));
  auto ids = diff_ids.value_or(std::vector<std::string>{});
  ids.push_back(layer.diff_id.str());
  root["diff_ids"] = ids;
  config["rootfs"] = root;
  HWIMG_TRY_ASSIGN(const auto* history_found, json::member(config, "history", json::Kind::array));
  json::Json history = history_found != nullptr ? *history_found : json::Json::array();
  history.push_back({{"created", created}, {"created_by", driver_layer_created_by(driver)}});
  config["history"] = history;
  HWIMG_TRY_ASSIGN(const auto* container, json::member(config, "config", json::Kind::object));
  json::Json settings = container != nullptr ? *container : json::Json::object();
  HWIMG_TRY_ASSIGN(const auto env_found, json::strings_member(settings, "Env"));
  auto env = env_found.value_or(std::vector<std::string>{});
  std::optional<std::string> ld_library_path;
  for (const auto& entry : env) {
    if (entry.starts_with("LD_LIBRARY_PATH=")) ld_library_path = entry.substr(16);
  }
  for (const auto& [name, value] : driver_environment(driver, ld_library_path)) put_env(env, name, value);
  settings["Env"] = env;
  config["config"] = settings;
  return config;
}

}  // namespace

std::optional<std::string> pinned_reference(const std::shared_ptr<const BaseImage>& image) {
  if (!image || !image->source || image->source->kind != image::SourceKind::registry) return std::nullopt;
  return fmt::format("{}@{}", image->source->registry.name(), image->manifest_descriptor.digest.str());
}

std::string pinned_dockerfile(const VariantPlan& plan, const StageImages& images, const SharedStageImages& shared) {
  const auto& dockerfile = *plan.dockerfile;
  const auto& stages = dockerfile.parsed->stages;
  auto lines = util::split(dockerfile.parsed->text, '\n');
  // Replaces the image a stage's FROM names, where the FROM line holds it as parsed.
  const auto replace_from = [&](std::size_t i, const std::string& image) {
    const auto& stage = stages[i];
    const auto line = static_cast<std::size_t>(stage.line - 1);
    const auto column = static_cast<std::size_t>(stage.from_column - 1);
    if (line >= lines.size() || lines[line].compare(column, stage.from.size(), stage.from) != 0) return false;
    lines[line].replace(column, stage.from.size(), image);
    return true;
  };
  // A stage's own ONBUILD lands in its image (buildah build --format docker) and would fire at the
  // FROM of it, in the stage itself rather than in the stages built on it.
  const auto has_onbuild = [&](std::size_t i) {
    return std::ranges::any_of(stages[i].instructions,
                               [](const recipe::Instruction& instruction) { return instruction.keyword == "ONBUILD"; });
  };
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (const auto built = shared.find(i); built != shared.end() && !has_onbuild(i)) {
      if (!replace_from(i, built->second)) continue;
      // From the stage's second instruction (past any continuation of its FROM) to the next FROM.
      const auto& instructions = stages[i].instructions;
      if (instructions.size() < 2) continue;
      const auto first = static_cast<std::size_t>(instructions[1].line - 1);
      const auto end = i + 1 < stages.size() ? static_cast<std::size_t>(stages[i + 1].line - 1) : lines.size();
      for (auto line = first; line < end && line < lines.size(); ++line) lines[line].clear();
    } else if (i < images.size()) {
      if (const auto pinned = pinned_reference(images[i])) replace_from(i, *pinned);
    }
  }
  return util::join(lines, "\n");
}

Result<void> run_buildah(const Buildah& buildah, const BuildahBuild& build, const VariantPlan& plan) {
  HWIMG_TRY_ASSIGN(const auto result, buildah.build(build));
  if (result.exit_status == 0) return {};
  const auto& dockerfile = *plan.dockerfile;
  const auto* instruction = failed_instruction(result.output, *dockerfile.parsed);
  const auto where = instruction != nullptr
                         ? fmt::format("{}:{}: {}", dockerfile.dockerfile.string(), instruction->line, instruction->keyword)
                         : dockerfile.dockerfile.string();
  std::string tail;
  for (const auto& line : util::split(util::tail_lines(result.output, 15), '\n')) tail += "\n  | " + line;
  return fail("{} of {} failed (buildah exited with status {}){}", where, build.name, result.exit_status,
              result.output.empty() ? " with no output" : "; its last output:" + tail);
}

Result<BuiltVariant> build_dockerfile_variant(VariantPlan plan, const DockerfileVariantInputs& inputs,
                                              BaseResolver& bases, const Buildah& buildah,
                                              const BuildSettings& settings, const LayoutProvider& layout_provider,
                                              LayerMemo& memo, CodeChecks checks) {
  const auto& variant = *plan.variant;
  const auto& base = inputs.base;
  const auto context = fmt::format("failed to build variant {}", variant.id);
  std::vector<fs::path> base_files;
  if (!leaves_layers_remote(base, settings)) {
    HWIMG_TRY_ASSIGN(base_files, with_context(bases.layer_files(base), plan.base_location.str()));
  }
  const auto pinned_file = inputs.scratch / "Dockerfile";
  HWIMG_TRY(util::write_file_atomic(pinned_file, pinned_dockerfile(plan, inputs.images, inputs.shared)));
  const auto& dockerfile = *plan.dockerfile;
  const auto image_id_file = inputs.scratch / "image-id";
  const BuildahBuild build{"variant " + variant.id, pinned_file, dockerfile.context, dockerfile.target,
                           dockerfile.args, image_id_file};
  HWIMG_TRY(run_buildah(buildah, build, plan));
  HWIMG_TRY_ASSIGN(const auto image_id, with_context(read_image_id(image_id_file), context));
  const auto staging = inputs.scratch / "oci";
  HWIMG_TRY(with_context(seed_base_layers(staging, base), context));
  HWIMG_TRY(with_context(buildah.push(image_id, staging), context));
  HWIMG_TRY_ASSIGN(const auto built,
                   with_context(read_buildah_image(staging), context + ": failed to read the image buildah built"));

  // The base's layers come first, unchanged: buildah keeps every layer's tar byte for byte.
  std::size_t from_base = 0;
  while (from_base < base.layers.size() && from_base < base.config.diff_ids.size() &&
         from_base < built.config.diff_ids.size() &&
         built.config.diff_ids[from_base] == base.config.diff_ids[from_base]) {
    ++from_base;
  }
  if (from_base != base.layers.size()) {
    return fail("{}: the image buildah built does not start with the layers of its base {} ({} of {} match); was the "
                "base changed while it built?",
                context, plan.base_text, from_base, base.layers.size());
  }
  // A layer the Dockerfile added whose content equals one of the base's (an empty one, say) was not
  // exported either (seed_base_layers): it is that base layer, read from there.
  const auto same_as_base = [&](const oci::Digest& diff_id) -> std::optional<std::size_t> {
    const auto found = std::ranges::find(base.config.diff_ids, diff_id);
    if (found == base.config.diff_ids.end()) return std::nullopt;
    return static_cast<std::size_t>(found - base.config.diff_ids.begin());
  };
  const auto instructions = layer_instructions(built.config);
  for (std::size_t i = from_base; i < built.manifest.layers.size(); ++i) {
    const auto base_layer = same_as_base(built.config.diff_ids[i]);
    if (base_layer && *base_layer >= base_files.size()) continue;  // in the base's registry: checked as the base's
    plan.built_layers.push_back({base_layer ? base_files[*base_layer] : built.layout.blob_path(built.manifest.layers[i].digest),
                                 built.config.diff_ids[i], i < instructions.size() ? instructions[i] : std::string()});
  }
  HWIMG_TRY(checks.cpu.check(plan, base, base_files, *settings.output));
  if (variant.uses_gpu()) HWIMG_TRY(checks.device.check(plan, base, base_files));

  std::vector<DriverLibrary> driver_libraries;
  if (plan.driver) {
    HWIMG_TRY_ASSIGN(driver_libraries, with_context(memo.driver_libraries(*plan.driver), context));
  }

  HWIMG_TRY_ASSIGN(const auto layout, layout_provider());
  if (!leaves_layers_remote(base, settings)) HWIMG_TRY(import_base_layers(base, base_files, layout));
  oci::Manifest manifest;
  manifest.layers = base.layers;
  std::map<std::size_t, oci::Digest> changed_diff_ids;
  for (std::size_t i = from_base; i < built.manifest.layers.size(); ++i) {
    const auto& layer = built.manifest.layers[i];
    const auto& diff_id = built.config.diff_ids[i];
    if (const auto base_layer = same_as_base(diff_id); base_layer && *base_layer < base.layers.size()) {
      manifest.layers.push_back(base.layers[*base_layer]);
      continue;
    }
    // A layer every variant adds alike (COPY of the same files) is compressed once.
    HWIMG_TRY_ASSIGN(const auto stored, with_context(memo.get_or_pack("buildah " + diff_id.str(), [&] {
                       return store_layer(built.layout, layer, diff_id, layout, settings);
                     }),
                                                     context));
    manifest.layers.push_back(stored.descriptor);
    if (stored.diff_id != diff_id) changed_diff_ids.emplace(i, stored.diff_id);
  }
  HWIMG_TRY_ASSIGN(auto config_json, with_context(portable_config(built.config_json, changed_diff_ids), context));
  HWIMG_TRY_ASSIGN(const auto extension, with_context(buildah.docker_config_extension(image_id), context));
  HWIMG_TRY_ASSIGN(config_json, with_context(with_docker_extension(std::move(config_json), extension), context));
  if (const auto& driver = plan.driver) {
    const oci::LayerOptions layer_options{settings.compression, settings.source_date_epoch};
    HWIMG_TRY_ASSIGN(const auto written,
                     with_context(memo.driver_layer(*driver, driver_libraries, layout, layer_options), context));
    manifest.layers.push_back(written.descriptor);
    HWIMG_TRY_ASSIGN(config_json, with_context(with_driver(std::move(config_json), *driver, written,
                                                           rfc3339(settings.source_date_epoch)),
                                               context));
  }
  HWIMG_TRY_ASSIGN(const auto config, with_context(labelled_config(std::move(config_json), variant), context));
  HWIMG_TRY_ASSIGN(manifest.config, with_context(layout.put_blob(config, oci::media_type::config), context));
  return with_context(store_variant_manifest(plan, base, std::move(manifest), layout, settings), context);
}

}  // namespace hwimg::build
