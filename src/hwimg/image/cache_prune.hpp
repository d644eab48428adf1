#pragma once
// Keeps the user's cache within bounds (docs/cache.md): `hwimg cache prune` and the cap applied
// after each build remove the least recently used entries, never one that a running process has
// pinned (cache_lease.hpp), so concurrent builds are safe.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hwimg/image/cache_entries.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::image {

struct PrunePolicy {
  std::optional<std::uint64_t> max_size;              // then least recently used first until it fits
  std::optional<std::chrono::seconds> older_than;     // entries not used for this long go first
};

struct PruneReport {
  std::vector<CacheEntry> removed;
  std::uint64_t removed_bytes = 0;
  std::vector<CacheEntry> kept;    // least recently used first
  std::uint64_t kept_bytes = 0;
  std::uint64_t in_use_bytes = 0;  // of kept_bytes, what running processes hold
  std::vector<std::string> failures;  // entries that could not be removed, and why
  bool skipped = false;  // another prune was running (PruneWait::skip_if_busy)
};

enum class PruneWait { block, skip_if_busy };

[[nodiscard]] Result<PruneReport> prune_cache(const std::filesystem::path& root, const PrunePolicy& policy,
                                              std::chrono::system_clock::time_point now,
                                              PruneWait wait = PruneWait::block);

// The cap applied after each build when neither HWIMG_CACHE_MAX_SIZE nor --cache-max-size says
// otherwise: 40 GiB, or a quarter of the file system holding `root` where that is less.
[[nodiscard]] std::uint64_t default_cache_cap(const std::filesystem::path& root);

}  // namespace hwimg::image
