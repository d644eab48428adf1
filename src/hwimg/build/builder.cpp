#include "hwimg/build/builder.hpp"

#include <algorithm>

#include <unistd.h>

#include "hwimg/build/build_cache.hpp"
#include "hwimg/build/builder_image.hpp"
#include "hwimg/build/cpu_code_check.hpp"
#include "hwimg/build/device_code_check.hpp"
#include "hwimg/build/dockerfile_build.hpp"
#include "hwimg/build/driver_bundle.hpp"
#include "hwimg/build/variant_jobs.hpp"
#include "hwimg/matrix/expand.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/recipe/variables.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"
#include "hwimg/util/thread_pool.hpp"

namespace hwimg::build {
namespace {

// Without a matrix a recipe builds one portable variant for this machine's architecture.
Result<std::vector<matrix::Variant>> portable_variants(const oci::Platform& host) {
  const bool arm = host.architecture == "arm64";
  HWIMG_TRY_ASSIGN(auto variant, matrix::portable_variant(arm ? hw::CpuArch::arm64 : hw::CpuArch::amd64));
  return std::vector<matrix::Variant>{std::move(variant)};
}

Result<std::vector<matrix::Variant>> expand_variants(const BuildRequest& request, const recipe::Recipe& recipe) {
  std::optional<std::filesystem::path> matrix_file = request.matrix;
  if (!matrix_file && recipe.matrix) {
    HWIMG_TRY_ASSIGN(const auto text, recipe::substitute(*recipe.matrix, {}));
    matrix_file = recipe.resolve(text);
  }
  if (!matrix_file) return portable_variants(request.host_platform);
  HWIMG_TRY_ASSIGN(auto expansion, matrix::load_matrix(*matrix_file, request.expand));
  for (const auto& warning : expansion.warnings) request.output->warning(warning);
  return std::move(expansion.variants);
}

Result<std::vector<matrix::Variant>> select_variants(std::vector<matrix::Variant> variants,
                                                     const std::vector<std::string>& only) {
  if (only.empty()) {
    return variants;
  }
  std::vector<std::string> ids;
  for (const auto& variant : variants) ids.push_back(variant.id);
  for (const auto& id : only) {
    if (std::ranges::find(ids, id) == ids.end()) {
      return fail_usage("unknown variant \"{}\" in --only{}; variants: {}", id, util::did_you_mean(id, ids),
                        util::join(ids, ", "));
    }
  }
  std::erase_if(variants, [&](const matrix::Variant& v) { return std::ranges::find(only, v.id) == only.end(); });
  return variants;
}

// Every toolkit is looked for before anything is built, so a missing one costs no build time.
Result<void> check_toolkits(const std::vector<matrix::Variant>& variants) {
  std::vector<std::string> errors;
  for (const auto& variant : variants) {
    if (!variant.uses_gpu()) continue;
    if (auto toolkit = matrix::resolve_toolkit(variant); !toolkit) errors.push_back(toolkit.error().message);
  }
  return fail_with_all(errors);
}

Result<void> check_compression_level(const oci::CompressionOptions& options) {
  const int level = options.level;
  if (options.compression == oci::Compression::gzip && (level < 0 || level > 12)) {
    return fail_usage("invalid --compression-level {}: expected 1 to 12 for gzip", level);
  }
  if (options.compression == oci::Compression::zstd && (level < 0 || level > 19)) {
    return fail_usage("invalid --compression-level {}: expected 1 to 19 for zstd", level);
  }
  return {};
}

// The layout's directory, absolute; empty for --explain with neither -o nor --push.
std::filesystem::path layout_directory(const BuildRequest& request) {
  if (request.layout.empty()) return {};
  std::error_code ec;
  return std::filesystem::absolute(request.layout, ec).lexically_normal();
}

// What the variants of one build share.
struct Build {
  const recipe::Recipe& recipe;
  const BuildRequest& request;
  const BuildSettings& settings;
  const oci::Layout* existing;  // the layout as it was before this build, for its cache
  const LayoutProvider& layout;
  LayerMemo& memo;
  BaseResolver& bases;
  BuilderImages& builders;
  CodeChecks checks;
};

// A variant planned, the images it uses resolved, and what the layout already has for it.
struct PlannedVariant {
  VariantPlan plan;
  std::shared_ptr<const BaseImage> base;
  std::shared_ptr<const BaseImage> builder;  // null: the build step runs on the host
  std::string key;
  std::optional<BuiltVariant> reusable;
};

Result<PlannedVariant> plan_and_look_up(Build& build, const matrix::Variant& variant, const std::filesystem::path& out) {
  PlannedVariant planned;
  HWIMG_TRY_ASSIGN(planned.plan, plan_variant(build.recipe, variant, out));
  HWIMG_TRY_ASSIGN(planned.base, with_context(build.bases.resolve(planned.plan), planned.plan.base_location.str()));
  HWIMG_TRY_ASSIGN(planned.builder, build.builders.resolve(planned.plan));
  HWIMG_TRY_ASSIGN(planned.key, variant_cache_key(build.recipe, planned.plan, *planned.base, build.settings,
                                                  layout_directory(build.request), planned.builder.get()));
  planned.reusable = reusable_variant(build.existing, planned.key, *planned.base, build.settings);
  return planned;
}

// One variant from its plan, or unchanged from the build cache of the layout.
Result<BuiltVariant> build_or_reuse(Build& build, const matrix::Variant& variant) {
  HWIMG_TRY_ASSIGN(const auto scratch, util::TempDir::create(std::filesystem::temp_directory_path(),
                                                             fmt::format("{}{}-", scratch_prefix, ::getpid())));
  HWIMG_TRY_ASSIGN(const auto planned, plan_and_look_up(build, variant, scratch.path() / "out"));
  auto& output = *build.request.output;
  if (planned.reusable) {
    output.progress(fmt::format("{}: unchanged, reusing {}", variant.id, planned.reusable->manifest.digest.str()));
    return *planned.reusable;
  }
  output.progress(fmt::format("building {}...", variant.id));
  HWIMG_TRY_ASSIGN(auto built, build_variant(planned.plan, *planned.base, build.bases, planned.builder.get(),
                                             build.builders, build.settings, build.layout, build.memo, build.checks));
  HWIMG_TRY_ASSIGN(const auto target, build.layout());
  HWIMG_TRY(remember_variant(target, planned.key, built));
  return built;
}

// What build_or_reuse would do for the variant, one line each, without doing it.
Result<std::vector<std::string>> explain_variant(Build& build, const matrix::Variant& variant) {
  const auto out = std::filesystem::temp_directory_path() / fmt::format("{}PID-XXXXXX", scratch_prefix) / "out";
  HWIMG_TRY_ASSIGN(const auto planned, plan_and_look_up(build, variant, out));
  const auto& plan = planned.plan;
  const auto& base = planned.base;
  const auto& builder = planned.builder;
  const auto& hit = planned.reusable;
  std::vector<std::string> lines{fmt::format("{} ({}): {}", variant.id, variant.platform.str(),
                                             hit ? "unchanged, reused: " + hit->manifest.digest.str() : "to build")};
  lines.push_back(base->is_scratch() ? "  base: scratch"
                                     : fmt::format("  base: {} ({})", plan.base_text, base->manifest_descriptor.digest.str()));
  if (plan.build) {
    const auto where = builder ? fmt::format("in {} ({})", builder->reference, builder->manifest_descriptor.digest.str())
                               : std::string("on this machine");
    lines.push_back(fmt::format("  build step {}, in {}: {}", where, plan.build->workdir.string(),
                                util::split(plan.build->run, '\n').front()));
  }
  for (const auto& layer : plan.layers) {
    lines.push_back(fmt::format("  layer {} -> {} ({})", layer.from.string(), layer.to,
                                layer.variant_specific ? "this variant's own" : "packed once, shared"));
  }
  if (plan.driver) lines.push_back(explain_driver(*plan.driver));
  return lines;
}

// The variants of the matrix (or the portable one) that --only keeps, their toolkits found.
Result<std::vector<matrix::Variant>> variants_to_build(const BuildRequest& request, const recipe::Recipe& recipe) {
  HWIMG_TRY_ASSIGN(auto all_variants, expand_variants(request, recipe));
  HWIMG_TRY_ASSIGN(auto variants, select_variants(std::move(all_variants), request.only));
  // A builder image brings its own toolkit, and so does a Dockerfile.
  if (!recipe.dockerfile && (!recipe.build || !recipe.build->image)) HWIMG_TRY(check_toolkits(variants));
  HWIMG_TRY(check_driver_recipe(recipe, variants));
  return variants;
}

// The layout, opened for writing (created, and cleaned of what killed writers left) by the first
// call, so a build that fails before any variant is ready leaves nothing behind.
LayoutProvider layout_on_first_use(const std::filesystem::path& directory) {
  struct Opened {
    std::mutex mutex;
    std::optional<oci::Layout> layout;
  };
  return [directory, opened = std::make_shared<Opened>()]() -> Result<oci::Layout> {
    std::lock_guard lock(opened->mutex);
    if (!opened->layout) {
      HWIMG_TRY_ASSIGN(opened->layout, oci::Layout::open(directory, oci::OpenMode::create));
    }
    return *opened->layout;
  };
}

// The user's blob cache, opened by the first call: a build without registry images never opens it.
std::function<Result<image::BlobCache*>()> cache_on_first_use(const std::filesystem::path& directory,
                                                              util::Output& output,
                                                              std::shared_ptr<image::CacheLease> lease) {
  struct Opened {
    std::mutex mutex;
    std::unique_ptr<image::BlobCache> cache;
  };
  return [directory, &output, lease, opened = std::make_shared<Opened>()]() -> Result<image::BlobCache*> {
    std::lock_guard lock(opened->mutex);
    if (!opened->cache) {
      HWIMG_TRY_ASSIGN(opened->cache, image::BlobCache::open(directory, output, lease));
    }
    return opened->cache.get();
  };
}

// Every variant, up to -j at once; in matrix order, or every variant's error.
Result<std::vector<BuiltVariant>> build_all(Build& build, const std::vector<matrix::Variant>& variants) {
  const unsigned jobs = build.request.jobs != 0 ? build.request.jobs : util::default_parallelism();
  return all_or_errors(
      run_each<BuiltVariant>(variants, jobs, [&](const matrix::Variant& variant) { return build_or_reuse(build, variant); }));
}

// The index's annotations: its `created` time and the recipe's own.
Result<oci::Annotations> index_annotations(const recipe::Recipe& recipe, std::int64_t source_date_epoch) {
  oci::Annotations annotations{{std::string(oci::annotation::created), rfc3339(source_date_epoch)}};
  for (const auto& [name, value] : recipe.annotations) {
    HWIMG_TRY_ASSIGN(annotations[name], recipe::substitute(value, {}));
  }
  return annotations;
}

// The recipe file, or the recipe the command line's --dockerfile flags make.
Result<recipe::Recipe> request_recipe(const BuildRequest& request) {
  if (!request.dockerfile) return recipe::load_recipe(request.recipe);
  recipe::Recipe recipe;
  std::error_code ec;
  // Not a file: relative paths on the command line are relative to the working directory.
  recipe.file = std::filesystem::current_path(ec) / "--dockerfile";
  if (ec) return fail("failed to find the working directory: {}", ec.message());
  recipe.dockerfile = request.dockerfile;
  return recipe;
}

// buildah, with hwimg's credentials and trust for the images FROM names.
Result<Buildah> make_buildah(const BuildRequest& request) {
  BuildahOptions options;
  HWIMG_TRY_ASSIGN(options.program, find_buildah(request.invoking_environment));
  const auto& registry = request.images.registry;
  std::error_code ec;
  if (!registry.docker_config_dir.empty() && std::filesystem::is_regular_file(registry.docker_config_dir / "config.json", ec)) {
    options.authfile = registry.docker_config_dir / "config.json";
  }
  options.ca_file = registry.ca_file;
  options.tls_verify = !registry.insecure;
  options.source_date_epoch = request.source_date_epoch;
  options.verbosity = request.verbosity;
  return Buildah::create(std::move(options));
}

}  // namespace

Result<BuildReport> build_recipe(const BuildRequest& request) {
  if (auto valid = oci::validate_tag(request.tag); !valid) return fail_usage("{}", valid.error().message);
  HWIMG_TRY(check_compression_level(request.compression));
  HWIMG_TRY_ASSIGN(const auto recipe, request_recipe(request));
  HWIMG_TRY(recipe::check_variables(recipe));
  HWIMG_TRY_ASSIGN(const auto variants, variants_to_build(request, recipe));
  // Found before anything is resolved or built: without buildah nothing can be.
  std::optional<Buildah> buildah;
  if (recipe.dockerfile) {
    HWIMG_TRY_ASSIGN(buildah, make_buildah(request));
  }

  // Scratch directories of builds that were killed hold whole build outputs; reclaim them.
  util::remove_orphaned_temporaries(std::filesystem::temp_directory_path(), scratch_prefix, scratch_prefix);
  const BuildSettings settings{request.compression, request.source_date_epoch, request.verbosity, request.output,
                               request.base_layers, request.host_environment, request.invoking_environment};
  // Read once for the build cache; opened for writing only when the first variant is ready.
  const auto existing = oci::Layout::open(request.layout);
  const auto provide_layout = layout_on_first_use(request.layout);
  LayerMemo memo;
  BaseResolver bases(recipe.directory(), request.images, cache_on_first_use(request.cache, *request.output, request.cache_lease));
  BuilderImages builders(bases, request.host_platform);
  DeviceCodeCheck device_code;
  CpuCodeCheck cpu_code(request.cache);
  Build build{recipe, request, settings, existing ? &*existing : nullptr, provide_layout, memo, bases,
              builders, {device_code, cpu_code}};
  BuildReport report;
  std::optional<DockerfileBuild> dockerfile_build;
  if (buildah) {
    dockerfile_build.emplace(DockerfileBuild{recipe, settings, build.existing, provide_layout,
                                             layout_directory(request), memo, bases,
                                             build.checks, *buildah, request.host_platform,
                                             request.jobs != 0 ? request.jobs : util::default_parallelism()});
  }
  if (request.mode == BuildMode::explain) {
    if (dockerfile_build) {
      HWIMG_TRY_ASSIGN(report.plan, explain_dockerfile_variants(*dockerfile_build, variants));
      return report;
    }
    for (const auto& variant : variants) {
      HWIMG_TRY_ASSIGN(const auto lines, explain_variant(build, variant));
      report.plan.insert(report.plan.end(), lines.begin(), lines.end());
    }
    return report;
  }
  if (dockerfile_build) {
    HWIMG_TRY_ASSIGN(report.variants, build_dockerfile_variants(*dockerfile_build, variants));
  } else {
    HWIMG_TRY_ASSIGN(report.variants, build_all(build, variants));
  }

  HWIMG_TRY_ASSIGN(const auto target, provide_layout());
  HWIMG_TRY_ASSIGN(const auto annotations, index_annotations(recipe, request.source_date_epoch));
  HWIMG_TRY_ASSIGN(report.index,
                   with_context(write_index(target, request.tag, report.variants, annotations,
                                            request.only.empty() ? IndexMerge::replace : IndexMerge::keep_other_variants),
                                "failed to write the image index"));
  report.images = bases.resolved();
  return report;
}

}  // namespace hwimg::build
