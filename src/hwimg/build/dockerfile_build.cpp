#include "hwimg/build/dockerfile_build.hpp"

#include <algorithm>

#include <unistd.h>

#include "hwimg/build/build_cache.hpp"
#include "hwimg/build/dockerfile_plan.hpp"
#include "hwimg/build/dockerfile_variant.hpp"
#include "hwimg/build/driver_bundle.hpp"
#include "hwimg/build/variant_jobs.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

namespace {

// A variant with everything it starts from resolved, and whether the layout already has it.
struct PreparedVariant {
  VariantPlan plan;
  StageImages images;
  std::shared_ptr<const BaseImage> base;
  std::string key;
  std::optional<BuiltVariant> cached;
};

Result<PreparedVariant> prepare(DockerfileBuild& build, VariantPlan plan) {
  const auto& dockerfile = *plan.dockerfile;
  const auto root = root_stage(dockerfile);
  PreparedVariant prepared;
  HWIMG_TRY_ASSIGN(prepared.base, with_context(build.bases.resolve(plan), plan.base_location.str()));
  prepared.images.resize(dockerfile.stages.size());
  std::vector<std::string> keyed;
  for (std::size_t i = 0; i < dockerfile.stages.size(); ++i) {
    const auto& source = dockerfile.stages[i];
    if (source.kind != StageSource::Kind::image) continue;
    if (i == root) {
      prepared.images[i] = prepared.base;
    } else {
      // The stages that only build run on this machine, as a builder image does.
      HWIMG_TRY_ASSIGN(prepared.images[i],
                       with_context(build.bases.resolve(*source.image, source.text, build.host_platform, ImageRole::builder),
                                    source.location.str()));
    }
    keyed.push_back(source.text + " " + prepared.images[i]->manifest_descriptor.digest.str());
  }
  HWIMG_TRY_ASSIGN(prepared.key, dockerfile_cache_key(plan, keyed, build.settings, build.output));
  prepared.cached = reusable_variant(build.existing, prepared.key, *prepared.base, build.settings);
  prepared.plan = std::move(plan);
  return prepared;
}

Result<fs::path> scratch_directory(std::optional<util::TempDir>& holder) {
  HWIMG_TRY_ASSIGN(auto created,
                   util::TempDir::create(fs::temp_directory_path(), fmt::format("{}{}-", scratch_prefix, ::getpid())));
  holder.emplace(std::move(created));
  return holder->path();
}

// The layers of each base the variants are built on, fetched and scanned for the CPU check every
// variant on it makes after its build (once per base and build: the first variant's plan stands
// for the others).
Result<void> prepare_bases(DockerfileBuild& build, const std::vector<PreparedVariant*>& to_build) {
  std::vector<const PreparedVariant*> firsts;
  for (const auto* prepared : to_build) {
    if (leaves_layers_remote(*prepared->base, build.settings)) continue;
    const auto& digest = prepared->base->manifest_descriptor.digest;
    if (std::ranges::none_of(firsts, [&](const PreparedVariant* seen) { return seen->base->manifest_descriptor.digest == digest; })) {
      firsts.push_back(prepared);
    }
  }
  for (const auto* prepared : firsts) {
    HWIMG_TRY_ASSIGN(const auto files,
                     with_context(build.bases.layer_files(*prepared->base), prepared->plan.base_location.str()));
    HWIMG_TRY(build.checks.cpu.scan_base(prepared->plan, *prepared->base, files, *build.settings.output));
  }
  return {};
}

// Every registry image the variants start from, pulled into buildah's storage once, up to -j at a
// time, before any build: variants built side by side would each pull the image they all need, and
// one build pulls its stages' images one after the other. Meanwhile hwimg prepares the bases,
// which the first variants would otherwise do after their builds, while the others wait on them.
Result<void> pull_stage_images(DockerfileBuild& build, const std::vector<PreparedVariant*>& to_build) {
  std::vector<std::string> references;
  for (const auto* prepared : to_build) {
    for (const auto& image : prepared->images) {
      auto pinned = pinned_reference(image);
      if (pinned && std::ranges::find(references, *pinned) == references.end()) references.push_back(std::move(*pinned));
    }
  }
  if (!references.empty()) {
    build.settings.output->progress(fmt::format("pulling {} into buildah's storage...", util::join(references, ", ")));
  }
  util::ThreadPool beside(1);
  auto bases = beside.submit([&] { return prepare_bases(build, to_build); });
  std::vector<Result<void>> results = run_each<void>(references, build.jobs, [&](const std::string& reference) {
    return build.buildah.pull(reference);
  });
  results.push_back(bases.get());
  return all_or_errors(results);
}

// The stages every variant builds alike, once, before the variants: each variant then builds on the
// image made here (pinned_dockerfile) instead of all of them building or looking it up at once.
Result<SharedStageImages> build_shared_stages(DockerfileBuild& build, const std::vector<PreparedVariant*>& to_build) {
  std::vector<VariantPlan> plans;
  for (const auto* prepared : to_build) plans.push_back(prepared->plan);
  const auto& first = *to_build.front();
  const auto& dockerfile = *first.plan.dockerfile;
  SharedStageImages built;
  for (const auto stage : shared_stages(plans)) {
    const auto& name = dockerfile.parsed->stages[stage].name;
    if (name.empty()) continue;  // --target needs a name
    build.settings.output->progress(fmt::format("building stage {} once for {} variants...", name, to_build.size()));
    std::optional<util::TempDir> scratch;
    HWIMG_TRY_ASSIGN(const auto directory, scratch_directory(scratch));
    HWIMG_TRY(util::write_file_atomic(directory / "Dockerfile", pinned_dockerfile(first.plan, first.images, {})));
    const auto image_id_file = directory / "image-id";
    const BuildahBuild shared{"stage " + name, directory / "Dockerfile", dockerfile.context, name, dockerfile.args,
                              image_id_file};
    const auto context = "failed to build the shared stage " + name;
    HWIMG_TRY(with_context(run_buildah(build.buildah, shared, first.plan), context));
    HWIMG_TRY_ASSIGN(auto id, with_context(read_image_id(image_id_file), context));
    built.emplace(stage, std::move(id));
  }
  return built;
}

Result<BuiltVariant> build_one(DockerfileBuild& build, PreparedVariant& prepared, const SharedStageImages& shared) {
  std::optional<util::TempDir> scratch;
  HWIMG_TRY_ASSIGN(const auto directory, scratch_directory(scratch));
  build.settings.output->progress(fmt::format("building {}...", prepared.plan.id()));
  const DockerfileVariantInputs inputs{*prepared.base, prepared.images, shared, directory};
  HWIMG_TRY_ASSIGN(auto built, build_dockerfile_variant(prepared.plan, inputs, build.bases, build.buildah, build.settings,
                                                        build.layout, build.memo, build.checks));
  HWIMG_TRY_ASSIGN(const auto layout, build.layout());
  HWIMG_TRY(remember_variant(layout, prepared.key, built));
  return built;
}

// Every variant planned, its images resolved and its cache looked up; undeclared arguments warned of.
Result<std::vector<PreparedVariant>> prepare_all(DockerfileBuild& build, const std::vector<matrix::Variant>& variants) {
  HWIMG_TRY_ASSIGN(const auto dockerfile, load_recipe_dockerfile(build.recipe));
  std::vector<VariantPlan> plans;
  for (const auto& variant : variants) {
    HWIMG_TRY_ASSIGN(plans.emplace_back(), plan_dockerfile_variant(build.recipe, dockerfile, variant));
  }
  if (!plans.empty()) {
    for (const auto& name : undeclared_arguments(plans.front())) {
      build.settings.output->warning(fmt::format("build argument {} is not declared by any ARG in {}; buildah ignores it",
                                                 name, dockerfile->file.string()));
    }
  }
  return all_or_errors(run_each<PreparedVariant>(plans, build.jobs, [&](VariantPlan& plan) {
    return prepare(build, std::move(plan));
  }));
}

std::string stage_label(const recipe::Dockerfile& dockerfile, std::size_t stage) {
  return dockerfile.stages[stage].name.empty() ? std::to_string(stage) : dockerfile.stages[stage].name;
}

Result<std::vector<BuiltVariant>> build_prepared(DockerfileBuild& build, std::vector<PreparedVariant>& prepared) {
  std::vector<std::string> errors;
  std::vector<PreparedVariant*> to_build;
  for (auto& variant : prepared) {
    if (variant.cached) {
      build.settings.output->progress(
          fmt::format("{}: unchanged, reusing {}", variant.plan.id(), variant.cached->manifest.digest.str()));
    } else {
      to_build.push_back(&variant);
    }
  }
  if (!to_build.empty()) HWIMG_TRY(pull_stage_images(build, to_build));
  SharedStageImages shared;
  if (to_build.size() > 1) {
    HWIMG_TRY_ASSIGN(shared, build_shared_stages(build, to_build));
  }
  auto built = run_each<BuiltVariant>(to_build, build.jobs,
                                      [&](PreparedVariant* variant) { return build_one(build, *variant, shared); });

  std::vector<BuiltVariant> variants_built;
  std::size_t next = 0;
  for (auto& variant : prepared) {
    if (variant.cached) {
      variants_built.push_back(*variant.cached);
      continue;
    }
    auto& result = built[next++];
    if (result) {
      variants_built.push_back(std::move(*result));
    } else {
      errors.push_back(result.error().message);
    }
  }
  HWIMG_TRY(fail_with_all(errors));
  return variants_built;
}

}  // namespace

Result<std::vector<std::string>> explain_dockerfile_variants(DockerfileBuild& build,
                                                             const std::vector<matrix::Variant>& variants) {
  HWIMG_TRY_ASSIGN(auto prepared, prepare_all(build, variants));
  std::vector<std::string> lines;
  if (prepared.empty()) return lines;
  const auto& first = *prepared.front().plan.dockerfile;
  const auto& parsed = *first.parsed;
  lines.push_back(fmt::format("Dockerfile {}, context {}, target stage {}", first.dockerfile.string(), first.context.string(),
                              stage_label(parsed, first.final_stage)));
  std::vector<VariantPlan> to_build;
  for (const auto& variant : prepared) {
    if (!variant.cached) to_build.push_back(variant.plan);
  }
  std::vector<std::string> shared;
  for (const auto stage : shared_stages(to_build)) shared.push_back(stage_label(parsed, stage));
  if (!shared.empty()) {
    lines.push_back(fmt::format("stages every variant builds alike, built once first: {}", util::join(shared, ", ")));
  }
  for (const auto& variant : prepared) {
    const auto& plan = variant.plan;
    lines.push_back(fmt::format("{} ({}): {}", plan.id(), plan.variant->platform.str(),
                                variant.cached ? "unchanged, reused: " + variant.cached->manifest.digest.str()
                                               : std::string("to build")));
    std::vector<std::string> args;
    for (const auto& [name, value] : plan.dockerfile->args) args.push_back(name + "=" + value);
    if (!args.empty()) lines.push_back("  build arguments: " + util::join(args, " "));
    for (std::size_t i = 0; i < plan.dockerfile->stages.size(); ++i) {
      const auto& source = plan.dockerfile->stages[i];
      const auto from = source.kind == StageSource::Kind::stage ? "stage " + stage_label(parsed, source.stage)
                        : source.kind == StageSource::Kind::scratch
                            ? std::string("scratch")
                            : fmt::format("{} ({})", source.text, variant.images[i]->manifest_descriptor.digest.str());
      lines.push_back(fmt::format("  stage {}: FROM {}{}", stage_label(parsed, i), from,
                                  i == root_stage(*plan.dockerfile) ? "  <- base" : ""));
    }
    if (plan.driver) lines.push_back(explain_driver(*plan.driver));
  }
  return lines;
}

Result<std::vector<BuiltVariant>> build_dockerfile_variants(DockerfileBuild& build,
                                                            const std::vector<matrix::Variant>& variants) {
  HWIMG_TRY_ASSIGN(auto prepared, prepare_all(build, variants));
  return build_prepared(build, prepared);
}

}  // namespace hwimg::build
