#include "hwimg/image/cache_prune.hpp"

#include <algorithm>
#include <cerrno>

#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include "hwimg/util/files.hpp"

namespace hwimg::image {
namespace fs = std::filesystem;

namespace {

// The lock file a user of the entry takes while making it (blob_cache.cpp, rootfs.cpp,
// commands/build.cpp); nobody holds it, since the entry is not pinned.
fs::path lock_of(const fs::path& root, const CacheEntry& entry) {
  const auto name = fs::path(entry.name).filename().string();
  switch (entry.kind) {
    case CacheEntryKind::blob: return root / "locks" / name;
    case CacheEntryKind::rootfs: return root / "locks" / ("rootfs-" + name);
    case CacheEntryKind::staging: return root / "locks" / ("staging-" + name);
    case CacheEntryKind::needs: return {};
  }
  return {};
}

// A directory entry is renamed out of the way first, so that its users never see it half removed:
// a crash leaves a temporary name that remove_orphaned_temporaries reclaims.
Result<void> remove_directory_entry(const fs::path& path) {
  const auto doomed = path.parent_path() / fmt::format(".{}.tmp-{}-pruned", path.filename().string(), ::getpid());
  if (::rename(path.c_str(), doomed.c_str()) != 0) {
    return fail("failed to remove {}: {}", path.string(), util::errno_text(errno));
  }
  return util::remove_tree(doomed);
}

Result<void> remove_entry(const fs::path& root, const CacheEntry& entry) {
  const auto path = root / entry.name;
  if (entry.kind == CacheEntryKind::blob || entry.kind == CacheEntryKind::needs) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return fail("failed to remove {}: {}", path.string(), util::errno_text(errno));
    }
  } else {
    if (entry.kind == CacheEntryKind::rootfs) {
      // The marker first: a rootfs without one is never used, whatever happens next.
      const auto marker = fs::path(path.string() + ".layers");
      if (::unlink(marker.c_str()) != 0 && errno != ENOENT) {
        return fail("failed to remove {}: {}", marker.string(), util::errno_text(errno));
      }
    }
    HWIMG_TRY(remove_directory_entry(path));
  }
  if (const auto lock = lock_of(root, entry); !lock.empty()) ::unlink(lock.c_str());
  return {};
}

}  // namespace

std::uint64_t default_cache_cap(const fs::path& root) {
  constexpr std::uint64_t cap = std::uint64_t{40} << 30;
  struct statvfs info {};
  // The cache may not exist yet: its nearest existing parent is on the same file system.
  auto probe = root;
  while (::statvfs(probe.c_str(), &info) != 0) {
    if (!probe.has_relative_path()) return cap;
    probe = probe.parent_path();
  }
  const auto size = static_cast<std::uint64_t>(info.f_blocks) * info.f_frsize;
  return size == 0 ? cap : std::min(cap, size / 4);
}

Result<PruneReport> prune_cache(const fs::path& root, const PrunePolicy& policy,
                                std::chrono::system_clock::time_point now, PruneWait wait) {
  PruneReport report;
  std::error_code ec;
  if (!fs::exists(root / "locks", ec)) {
    // Nothing was ever cached or pinned there; a bare directory may still hold old entries.
    if (!fs::exists(root, ec)) return report;
    HWIMG_TRY(with_context(util::make_private_directory(root / "locks"), "failed to prune the cache " + root.string()));
  }
  const auto lock_path = root / "locks" / "prune";
  std::optional<util::FileLock> lock;
  if (wait == PruneWait::block) {
    HWIMG_TRY_ASSIGN(lock, util::FileLock::acquire(lock_path));
  } else {
    HWIMG_TRY_ASSIGN(lock, util::FileLock::try_acquire(lock_path));
    if (!lock) {
      report.skipped = true;
      return report;
    }
  }
  for (const auto& directory : {root / "rootfs", root / "staging"}) {
    util::remove_orphaned_temporaries(directory, ".", ".tmp-");
  }
  // Under the lock, so no pin lands between reading the leases and removing.
  HWIMG_TRY_ASSIGN(const auto entries, list_cache(root, StaleLeases::reclaim));
  std::uint64_t total = 0;
  for (const auto& entry : entries) total += entry.bytes;
  const auto remove = [&](const CacheEntry& entry) {
    if (auto removed = remove_entry(root, entry); !removed) {
      report.failures.push_back(removed.error().message);
      return false;
    }
    total -= entry.bytes;
    report.removed_bytes += entry.bytes;
    report.removed.push_back(entry);
    return true;
  };
  // Least recently used first (list_cache's order): the old ones, then as many as the cap needs.
  for (const auto& entry : entries) {
    const bool old = policy.older_than && now - entry.last_used > *policy.older_than;
    const bool over = policy.max_size && total > *policy.max_size;
    if (!entry.in_use && (old || over) && remove(entry)) continue;
    report.kept.push_back(entry);
    report.kept_bytes += entry.bytes;
    if (entry.in_use) report.in_use_bytes += entry.bytes;
  }
  return report;
}

}  // namespace hwimg::image
