#include "hwimg/build/build_cache.hpp"

#include <algorithm>

#include <sys/stat.h>

#include "hwimg/oci/layout.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/json_reader.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

namespace {

// Appends the metadata of every file under `root`, in a stable order; `skip` (the output layout,
// which may sit inside the workdir), .git and the scratch directories of builds (TMPDIR may be
// inside the workdir too) are not inputs.
void hash_tree(const fs::path& root, const fs::path& skip, oci::Sha256& hash) {
  std::vector<std::string> lines;
  std::error_code ec;
  const auto add = [&](const fs::path& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) return;
    // A directory's own mtime moves whenever anything (even the output layout) is created in it;
    // its entries are listed themselves, so only files carry size and mtime.
    if (S_ISDIR(info.st_mode)) {
      lines.push_back(fmt::format("{}\t{}\n", path.lexically_relative(root).string(), info.st_mode));
      return;
    }
    lines.push_back(fmt::format("{}\t{}\t{}\t{}.{}\n", path.lexically_relative(root).string(), info.st_mode,
                                info.st_size, info.st_mtim.tv_sec, info.st_mtim.tv_nsec));
  };
  add(root);
  if (fs::is_directory(root, ec)) {
    for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      const auto name = it->path().filename().string();
      if (name == ".git" || it->path() == skip || (name.starts_with(scratch_prefix) && it->is_directory(ec))) {
        it.disable_recursion_pending();
        continue;
      }
      add(it->path());
    }
  }
  std::ranges::sort(lines);
  // Where it is, however the command line spelled it: the same recipe named from another working
  // directory is the same input.
  hash.update(fs::absolute(root, ec).lexically_normal().string() + "\n");
  for (const auto& line : lines) hash.update(line);
}

fs::path cache_file(const fs::path& output, const std::string& key) {
  return output / ".hwimg" / "cache" / (key + ".json");
}

// What the variant is and the settings its layers are written with.
void hash_variant(const VariantPlan& plan, const BuildSettings& settings, oci::Sha256& hash) {
  const auto& variant = *plan.variant;
  hash.update(fmt::format("\nvariant {} {}\n", variant.id, variant.platform.str()));
  for (const auto& [k, v] : variant.annotations) hash.update(fmt::format("a {}={}\n", k, v));
  hash.update(fmt::format("e NVIDIA_REQUIRE_CUDA={}\n", variant.nvidia_require_cuda));
  for (const auto& [k, v] : variant.variables) hash.update(fmt::format("v {}={}\n", k, v));
  for (const auto& t : variant.gpu_targets) hash.update(fmt::format("g {}\n", t.name()));
  hash.update(fmt::format("settings {} {} {} {} {}\n", oci::compression_name(settings.compression.compression),
                          settings.compression.level, settings.compression.gzip_block_size,
                          settings.compression.zstd_block_size, settings.source_date_epoch));
}

// The bundled driver's libraries, by their directory's file metadata as other layer sources.
void hash_driver(const VariantPlan& plan, const fs::path& output, oci::Sha256& hash) {
  if (!plan.driver) return;
  hash.update(fmt::format("driver {} {}\n", plan.driver->version.str(), plan.driver->to));
  hash_tree(plan.driver->from, output, hash);
}

}  // namespace

Result<std::string> variant_cache_key(const recipe::Recipe& recipe, const VariantPlan& plan, const BaseImage& base,
                                      const BuildSettings& settings, const fs::path& output, const BaseImage* builder) {
  oci::Sha256 hash;
  hash.update(fmt::format("hwimg {}\n", HWIMG_VERSION));
  HWIMG_TRY_ASSIGN(const auto recipe_text, util::read_file(recipe.file));
  hash.update(recipe_text);
  hash_variant(plan, settings, hash);

  // The base by what it is now: a tag that moved, or a layout rewritten, is another input.
  hash.update(fmt::format("base {} {}\n", plan.base_text, base.manifest_descriptor.digest.str()));
  if (builder != nullptr) {
    hash.update(fmt::format("builder {} {}\n", builder->reference, builder->manifest_descriptor.digest.str()));
  }
  if (plan.build && !plan.build->workdir_in_build_output) hash_tree(plan.build->workdir, output, hash);
  for (const auto& layer : plan.layers) {
    if (!layer.from_build_output) hash_tree(layer.from, output, hash);
  }
  hash_driver(plan, output, hash);
  return hash.finish().hex();
}

Result<std::string> dockerfile_cache_key(const VariantPlan& plan, const std::vector<std::string>& images,
                                         const BuildSettings& settings, const fs::path& output) {
  const auto& dockerfile = *plan.dockerfile;
  oci::Sha256 hash;
  hash.update(fmt::format("hwimg {} dockerfile\n", HWIMG_VERSION));
  hash.update(fmt::format("{}\n{}\n", dockerfile.dockerfile.string(), dockerfile.parsed->text));
  hash.update(fmt::format("target {}\n", dockerfile.target.value_or("")));
  for (const auto& [name, value] : dockerfile.args) hash.update(fmt::format("arg {}={}\n", name, value));
  for (const auto& [name, value] : plan.annotations) hash.update(fmt::format("annotation {}={}\n", name, value));
  hash.update(fmt::format("verify {}\n", plan.verify_cpu ? static_cast<int>(*plan.verify_cpu) : -1));
  hash_variant(plan, settings, hash);
  for (const auto& image : images) hash.update("image " + image + "\n");
  hash_tree(dockerfile.context, output, hash);
  hash_driver(plan, output, hash);
  return hash.finish().hex();
}

std::optional<BuiltVariant> cached_variant(const oci::Layout& layout, const std::string& key,
                                           const std::set<oci::Digest>& remote) {
  // In the layout, which others may have made: a regular file of one index's size at most.
  auto text = util::read_regular_file(cache_file(layout.root(), key), oci::max_manifest_size);
  if (!text) return std::nullopt;
  const auto entry = util::json::parse_object(*text);
  if (!entry || !entry->contains("index")) return std::nullopt;
  auto index = oci::parse_index((*entry)["index"].dump());
  if (!index || index->manifests.size() != 1) return std::nullopt;
  const auto& manifest_descriptor = index->manifests.front();
  auto manifest_bytes = layout.read_blob(manifest_descriptor);
  if (!manifest_bytes) return std::nullopt;
  auto manifest = oci::parse_manifest(*manifest_bytes);
  if (!manifest || !layout.read_blob(manifest->config)) return std::nullopt;
  for (const auto& layer : manifest->layers) {
    if (!layout.has_blob(layer.digest) && !remote.contains(layer.digest)) return std::nullopt;
  }
  const auto variant = util::json::string_member(*entry, "variant");
  if (!variant) return std::nullopt;
  return BuiltVariant{variant->value_or(""), manifest_descriptor, true};
}

std::optional<BuiltVariant> reusable_variant(const oci::Layout* existing, const std::string& key, const BaseImage& base,
                                             const BuildSettings& settings) {
  if (existing == nullptr) return std::nullopt;
  std::set<oci::Digest> remote;
  if (leaves_layers_remote(base, settings)) {
    for (const auto& layer : base.layers) remote.insert(layer.digest);
  }
  return cached_variant(*existing, key, remote);
}

void forget_variants_except(const oci::Layout& layout, const std::set<oci::Digest>& kept) {
  std::error_code ec;
  const auto directory = layout.state_directory() / "cache";
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".json") continue;
    const auto text = util::read_regular_file(it->path(), oci::max_manifest_size);
    const auto entry = text ? util::json::parse_object(*text) : std::nullopt;
    const auto index = entry && entry->contains("index") ? oci::parse_index((*entry)["index"].dump())
                                                         : Result<oci::Index>(fail("no index"));
    if (index && index->manifests.size() == 1 && kept.contains(index->manifests.front().digest)) continue;
    std::error_code ignored;
    fs::remove(it->path(), ignored);
  }
}

Result<void> remember_variant(const oci::Layout& layout, const std::string& key, const BuiltVariant& variant) {
  HWIMG_TRY(util::make_directories(layout.state_directory() / "cache"));
  oci::Index holder;
  holder.manifests.push_back(variant.manifest);
  const util::json::Json entry = {{"variant", variant.id},
                                {"index", util::json::Json::parse(oci::to_json(holder))}};
  return util::write_file_atomic(cache_file(layout.root(), key), entry.dump());
}

}  // namespace hwimg::build
