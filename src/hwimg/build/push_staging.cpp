#include "hwimg/build/push_staging.hpp"

#include <cerrno>
#include <set>

#include <unistd.h>

#include <fmt/format.h>

#include "hwimg/build/build_cache.hpp"
#include "hwimg/image/cache_entries.hpp"
#include "hwimg/oci/digest.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/layout.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

Result<PushStaging> PushStaging::open(image::CacheLease& lease, const fs::path& recipe, util::Output& output) {
  const auto& root = lease.root();
  const auto what = "failed to open the staging area of " + recipe.string();
  for (const auto& directory : {root, root / "staging", root / "locks"}) {
    HWIMG_TRY(with_context(util::make_private_directory(directory), what));
  }
  std::error_code ec;
  const auto absolute = fs::absolute(recipe, ec);
  auto identity = ec ? fs::path() : fs::weakly_canonical(absolute, ec);
  if (ec) return fail("{}: {}", what, ec.message());
  const auto key = oci::Digest::sha256_of(identity.string()).hex().substr(0, 16);
  // Pinned before it is locked or looked at: a prune then leaves it and its lock file alone.
  HWIMG_TRY(lease.pin(image::cache_entry::staging(key)));
  const auto lock_path = root / "locks" / ("staging-" + key);
  HWIMG_TRY_ASSIGN(auto lock, util::FileLock::try_acquire(lock_path));
  if (!lock) {
    output.progress(fmt::format("waiting for another build of {}: it is using the staging area {}", identity.string(),
                                (root / "staging" / key).string()));
    HWIMG_TRY_ASSIGN(lock, util::FileLock::acquire(lock_path));
  }
  // Made now, so that `cache ls` names its recipe while the build runs.
  const auto layout = root / "staging" / key;
  HWIMG_TRY(with_context(oci::Layout::open(layout, oci::OpenMode::create), what));
  const auto about = image::staging_about_file(layout);
  HWIMG_TRY(with_context(util::make_private_directory(about.parent_path()), what));
  HWIMG_TRY(with_context(util::write_file_atomic(about, identity.string() + "\n", 0600), what));
  image::mark_used(layout);
  return PushStaging(layout, std::move(*lock));
}

Result<void> PushStaging::keep_only(const std::string& tag) const {
  const auto what = "failed to trim the staging layout " + m_layout.string();
  HWIMG_TRY_ASSIGN(const auto layout, with_context(oci::Layout::open(m_layout), what));
  HWIMG_TRY_ASSIGN(const auto root, with_context(layout.resolve(tag), what));
  HWIMG_TRY_ASSIGN(const auto index_bytes, with_context(layout.read_blob(root), what));
  HWIMG_TRY_ASSIGN(const auto index, with_context(oci::parse_index(index_bytes), what));
  std::set<oci::Digest> kept{root.digest};
  std::set<oci::Digest> variants;
  for (const auto& descriptor : index.manifests) {
    HWIMG_TRY_ASSIGN(const auto bytes, with_context(layout.read_blob(descriptor), what));
    HWIMG_TRY_ASSIGN(const auto manifest, with_context(oci::parse_manifest(bytes), what));
    variants.insert(descriptor.digest);
    kept.insert(descriptor.digest);
    kept.insert(manifest.config.digest);
    for (const auto& layer : manifest.layers) kept.insert(layer.digest);
  }
  HWIMG_TRY(with_context(layout.update_index_json([&](oci::Index& tags) -> Result<void> {
                           std::erase_if(tags.manifests, [&](const oci::Descriptor& entry) {
                             const auto name = entry.ref_name().value_or("");
                             const bool variant_tag = name.starts_with(tag + "-") && variants.contains(entry.digest);
                             return name != tag && !variant_tag;
                           });
                           return {};
                         }),
                         what));
  forget_variants_except(layout, variants);
  std::error_code ec;
  for (fs::directory_iterator it(m_layout / "blobs" / "sha256", ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.starts_with('.') || kept.contains(oci::Digest::from_sha256_hex(name))) continue;
    if (::unlink(it->path().c_str()) != 0 && errno != ENOENT) {
      return fail("{}: failed to remove {}: {}", what, it->path().string(), util::errno_text(errno));
    }
  }
  image::mark_used(m_layout);
  return {};
}

}  // namespace hwimg::build
