#include "hwimg/build/push_staging.hpp"

#include <fmt/format.h>

#include "hwimg/image/cache_entries.hpp"
#include "hwimg/oci/digest.hpp"
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

void PushStaging::built() const { image::mark_used(m_layout); }

}  // namespace hwimg::build
