#include "hwimg/commands/build.hpp"

#include <set>

#include <fmt/format.h>

#include "hwimg/build/base_image.hpp"
#include "hwimg/build/builder_image.hpp"
#include "hwimg/build/push_staging.hpp"
#include "hwimg/commands/cache.hpp"
#include "hwimg/commands/environment.hpp"
#include "hwimg/commands/registry_commands.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/util/interrupts.hpp"

namespace hwimg::commands {
namespace {

// The layers of the registry bases, and the repository holding each: the push mounts them (same
// registry) or relays them from there (docs/recipe.md#straight-to-a-registry).
registry::ExternalBlobs registry_layers(const std::vector<std::shared_ptr<const build::BaseImage>>& images) {
  registry::ExternalBlobs layers;
  for (const auto& image : images) {
    if (image->role != build::ImageRole::base || !image->source || image->source->kind != image::SourceKind::registry) {
      continue;
    }
    auto repository = image->source->registry;
    repository.tag.clear();
    repository.digest.reset();
    for (const auto& layer : image->layers) layers.emplace(layer.digest, repository);
  }
  return layers;
}

// What the build wrote into its layout, to `destination`, with the compat artifacts.
Result<registry::PushSummary> push_build(const build::BuildRequest& request, const build::BuildReport& report,
                                         const registry::Reference& destination, const registry::ClientOptions& options,
                                         compat::CompatArtifacts compat) {
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(options));
  auto external = registry_layers(report.images);
  if (request.base_layers == build::BaseLayers::copied) {
    // The layout holds the base layers too, but a mount within the target registry beats an upload.
    std::erase_if(external, [&](const auto& entry) { return entry.second.registry != destination.registry; });
  }
  std::set<oci::Digest> external_digests;
  for (const auto& [digest, where] : external) external_digests.insert(digest);
  HWIMG_TRY_ASSIGN(auto plan, registry::plan_push_to(request.layout, request.tag, destination, external_digests));
  return compat::push_with_artifacts(client, std::move(plan), destination, external, compat, *request.output);
}

// "wrote oci:out:1 (5 variants: 1 built, 0 unchanged, 4 kept from before; index sha256:…)".
std::string written_line(const build::BuildRequest& request, const build::BuildReport& report) {
  const auto unchanged = static_cast<std::size_t>(std::ranges::count_if(report.variants, &build::BuiltVariant::reused));
  const auto built = report.variants.size() - unchanged;
  const auto kept = report.index.variants - std::min(report.index.variants, report.variants.size());
  return fmt::format("wrote oci:{}:{} ({} variant{}: {} built, {} unchanged{}; index {})", request.layout.string(),
                     request.tag, report.index.variants, report.index.variants == 1 ? "" : "s", built, unchanged,
                     kept == 0 ? std::string() : fmt::format(", {} kept from before", kept),
                     report.index.descriptor.digest.str());
}

}  // namespace

Result<int> run_build(BuildArguments arguments) {
  // Before any thread starts. 20 s: what a second Ctrl-C leaves the running steps before SIGKILL.
  const util::InterruptForwarding interrupts(std::chrono::seconds(20));
  auto& request = arguments.request;
  TerminalOutput output(stdout_is_terminal() ? Progress::shown : Progress::hidden, arguments.registry.verbose);
  request.output = &output;
  const bool keeps_layout = !request.layout.empty();  // -o: else the layout is a staging one for --push
  HWIMG_TRY_ASSIGN(request.source_date_epoch, source_date_epoch());
  request.expand.cuda_root = cuda_root();
  request.host_environment = host_step_environment();
  request.invoking_environment = process_environment();
  request.images.registry = client_options(arguments.registry, output);
  // Absolute once: a builder image's root filesystem in the cache is handed to runc or bwrap, which
  // do not run in this working directory (a relative --cache failed there).
  std::error_code ec;
  request.cache = std::filesystem::absolute(arguments.cache.empty() ? cache_root() : arguments.cache, ec);
  if (ec) return fail("failed to use the cache {}: {}", arguments.cache.string(), ec.message());
  request.cache = request.cache.lexically_normal();
  HWIMG_TRY_ASSIGN(const auto cap, cache_cap(request.cache, arguments.cache_max_size));
  // Held until the cap is applied: what this build used is not pruned by it or by another one.
  request.cache_lease = std::make_shared<image::CacheLease>(request.cache);
  std::optional<build::PushStaging> staging;
  std::optional<registry::Reference> push;
  if (!arguments.push.empty()) {
    auto destination = registry::parse_reference(arguments.push);
    if (!destination) return std::unexpected(Error{destination.error().message, ExitCode::usage});
    if (destination->tag.empty() || destination->digest) {
      return fail_usage("failed to build for {}: name the tag to push to, REGISTRY/REPO:TAG", arguments.push);
    }
    request.tag = destination->tag;
    if (!keeps_layout) {
      // Straight to a registry: the variants' own blobs are staged in the cache, one layout per
      // recipe (so a rerun, to any repository, reuses them), the bases' stay where they are.
      const auto staged = request.dockerfile ? std::filesystem::absolute(request.dockerfile->file.value, ec) : request.recipe;
      HWIMG_TRY_ASSIGN(staging, build::PushStaging::open(*request.cache_lease, staged, output));
      request.layout = staging->layout();
      request.base_layers = build::BaseLayers::left_in_registry;
    }
    push = std::move(*destination);
  } else if (!keeps_layout && request.mode == build::BuildMode::build) {
    return fail_usage("failed to build: name where the images go, -o DIR and/or --push REGISTRY/REPO:TAG");
  }
  // The probe's CPU, overrides applied: the platform builder images are resolved for.
  HWIMG_TRY_ASSIGN(const auto probe, probe_options());
  HWIMG_TRY_ASSIGN(const auto cpu, probe::probe_host_cpu(probe));
  request.host_platform = build::host_platform(cpu.arch, cpu.level);
  HWIMG_TRY_ASSIGN(const auto report, build::build_recipe(request));
  if (request.mode == build::BuildMode::explain) {
    for (const auto& line : report.plan) fmt::print("{}\n", line);
    return 0;
  }
  if (staging) HWIMG_TRY(staging->keep_only(request.tag));
  std::optional<registry::PushSummary> pushed;
  if (push) {
    HWIMG_TRY_ASSIGN(pushed, push_build(request, report, *push, request.images.registry, arguments.compat));
  }
  if (cap) apply_cache_cap(request.cache, *cap, output);
  for (const auto& variant : report.variants) {
    fmt::print("{:<32} {:<20} {}{}\n", variant.id, variant.manifest.platform->str(), variant.manifest.digest.str(),
               variant.reused ? " (unchanged)" : "");
  }
  if (keeps_layout) fmt::print("{}\n", written_line(request, report));
  if (pushed) fmt::print("{}\n", push_summary_line(*pushed));
  return 0;
}

}  // namespace hwimg::commands
