#include "hwimg/build/builder.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include <sys/utsname.h>
#include <unistd.h>

#include "hwimg/build/build_cache.hpp"
#include "hwimg/recipe/variables.hpp"
#include "hwimg/matrix/expand.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"
#include "hwimg/util/thread_pool.hpp"

namespace hwimg::build {
namespace {

Result<std::int64_t> parse_epoch(const std::optional<std::string>& text) {
  if (!text || text->empty()) {
    return 0;
  }
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size() || value < 0) {
    return fail_usage("invalid SOURCE_DATE_EPOCH \"{}\": expected a non-negative number of seconds", *text);
  }
  return value;
}

// Without a matrix a recipe builds one portable variant for this machine's architecture.
Result<std::vector<matrix::Variant>> portable_variants() {
  utsname name{};
  const bool arm = ::uname(&name) == 0 && std::string_view(name.machine) == "aarch64";
  const auto file = matrix::parse_matrix_text(arm ? "axes: {cpu: [aarch64]}" : "axes: {cpu: [x86-64-v1]}",
                                              "(portable variant)");
  auto report = matrix::expand_matrix(file, matrix::SkipUnsupported::no);
  if (!report.errors.empty()) return fail("{}", util::join(report.errors, "; "));
  return report.variants;
}

Result<std::vector<matrix::Variant>> plan_variants(const BuildRequest& request, const recipe::Recipe& recipe) {
  std::optional<std::filesystem::path> matrix_file = request.matrix;
  if (!matrix_file && recipe.matrix) {
    auto text = recipe::substitute(*recipe.matrix, {});
    if (!text) return std::unexpected(text.error());
    matrix_file = recipe.resolve(*text);
  }
  if (!matrix_file) return portable_variants();
  auto expansion = matrix::load_matrix(*matrix_file, request.skip_unsupported);
  if (!expansion) return std::unexpected(expansion.error());
  for (const auto& warning : expansion->warnings) {
    fmt::print(stderr, "hwimg: warning: {}\n", warning);
  }
  return expansion->variants;
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
  if (!errors.empty()) return fail("{}", util::join(errors, "\nhwimg: error: "));
  return {};
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

}  // namespace

Result<int> run_build(const BuildRequest& request) {
  HWIMG_TRY(oci::validate_tag(request.tag));
  HWIMG_TRY(check_compression_level(request.compression));
  auto epoch = parse_epoch(request.source_date_epoch);
  if (!epoch) return std::unexpected(epoch.error());
  auto recipe = recipe::load_recipe(request.recipe);
  if (!recipe) return std::unexpected(recipe.error());
  HWIMG_TRY(recipe::check_variables(*recipe));
  auto all_variants = plan_variants(request, *recipe);
  if (!all_variants) return std::unexpected(all_variants.error());
  auto plans = select_variants(std::move(*all_variants), request.only);
  if (!plans) return std::unexpected(plans.error());
  HWIMG_TRY(check_toolkits(*plans));

  // Scratch directories of builds that were killed hold whole build outputs; reclaim them.
  util::remove_orphaned_temporaries(std::filesystem::temp_directory_path(), "hwimg-build-", "hwimg-build-");
  const bool progress = ::isatty(STDOUT_FILENO) != 0;
  BuildSettings settings{request.compression, *epoch, request.verbosity};
  std::mutex layout_mutex;
  std::optional<oci::Layout> layout;
  const LayoutProvider provide_layout = [&]() -> Result<oci::Layout> {
    std::lock_guard lock(layout_mutex);
    if (!layout) {
      auto opened = oci::Layout::open(request.output, oci::OpenMode::create);
      if (!opened) return std::unexpected(opened.error());
      layout = std::move(*opened);
    }
    return *layout;
  };

  LayerMemo memo;
  const unsigned jobs = request.jobs != 0 ? request.jobs : util::default_parallelism();
  std::vector<std::future<Result<BuiltVariant>>> futures;
  {
    util::ThreadPool pool(std::min<unsigned>(jobs, static_cast<unsigned>(plans->size())));
    for (const auto& plan : *plans) {
      futures.push_back(pool.submit([&, &variant = plan]() -> Result<BuiltVariant> {
        auto key = variant_cache_key(*recipe, variant, settings, std::filesystem::absolute(request.output).lexically_normal());
        if (!key) return std::unexpected(key.error());
        if (auto hit = cached_variant(request.output, *key)) {
          if (progress) fmt::print(stderr, "{}: unchanged, reusing {}\n", variant.id, hit->manifest.digest.str());
          return *hit;
        }
        if (progress) fmt::print(stderr, "building {}...\n", variant.id);
        auto built = build_variant(*recipe, variant, settings, provide_layout, memo);
        if (built) {
          auto layout_now = provide_layout();
          if (!layout_now) return std::unexpected(layout_now.error());
          HWIMG_TRY(remember_variant(*layout_now, *key, *built));
        }
        return built;
      }));
    }
  }
  std::vector<BuiltVariant> built;
  std::vector<std::string> errors;
  for (auto& future : futures) {
    auto result = future.get();
    if (result) {
      built.push_back(std::move(*result));
    } else {
      errors.push_back(result.error().message);
    }
  }
  if (!errors.empty()) {
    return std::unexpected(Error{util::join(errors, "\nhwimg: error: ")});
  }

  if (!layout) {
    auto opened = provide_layout();
    if (!opened) return std::unexpected(opened.error());
  }
  oci::Annotations index_annotations{{"org.opencontainers.image.created", rfc3339(*epoch)}};
  for (const auto& [name, value] : recipe->annotations) {
    auto text = recipe::substitute(value, {});
    if (!text) return std::unexpected(text.error());
    index_annotations[name] = *text;
  }
  auto index = write_index(*layout, request.tag, built, index_annotations,
                           request.only.empty() ? IndexMerge::replace : IndexMerge::keep_other_variants);
  if (!index) return std::unexpected(index.error().context("failed to write the image index"));

  for (const auto& variant : built) {
    fmt::print("{:<32} {:<20} {}{}\n", variant.id, variant.manifest.platform->str(), variant.manifest.digest.str(),
               variant.reused ? " (unchanged)" : "");
  }
  fmt::print("wrote oci:{}:{} ({} variant{}, index {})\n", request.output.string(), request.tag, built.size(),
             built.size() == 1 ? "" : "s", index->digest.str());
  return 0;
}

}  // namespace hwimg::build
