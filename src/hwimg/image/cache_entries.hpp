#pragma once
// What the user's cache holds (docs/cache.md): one entry per blob, per unpacked root filesystem,
// per staging layout of `build --push` and per layer's code needs, each with the disk space it takes and when a build
// last used it.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::image {

// `needs`: what a layer's programs need from a CPU (verify/needs_cache.hpp), kept by layer digest.
enum class CacheEntryKind { blob, rootfs, staging, needs };
[[nodiscard]] std::string_view kind_name(CacheEntryKind kind);

struct CacheEntry {
  CacheEntryKind kind = CacheEntryKind::blob;
  std::string name;   // as a lease pins it: "blobs/sha256/<hex>", "rootfs/<hex>", "staging/<key>";
                      // "code-needs/sha256/<hex>.json", which nothing pins
  std::uint64_t bytes = 0;  // disk space (allocated blocks, hard links once)
  std::chrono::system_clock::time_point last_used;
  std::string about;  // a staging layout's recipe; empty for the others
  bool in_use = false;  // pinned by a running process's lease
};

// The entries pinned by the leases of running processes. With `reclaim`, leases whose process
// ended are removed (only a prune, holding the prune lock, may).
enum class StaleLeases { keep, reclaim };

// Every entry under `root`, least recently used first, `in_use` from the leases read as `stale`
// says; none when there is no cache there. What killed writers left (temporaries, staging
// directories of unpacks) is not an entry.
[[nodiscard]] Result<std::vector<CacheEntry>> list_cache(const std::filesystem::path& root,
                                                         StaleLeases stale = StaleLeases::keep);
[[nodiscard]] std::set<std::string> pinned_entries(const std::filesystem::path& root, StaleLeases stale);

// The disk space a file or a directory tree takes, hard links counted once, not following links.
[[nodiscard]] std::uint64_t disk_usage(const std::filesystem::path& path);

// Where a staging layout records the recipe it was built from, for `cache ls`.
[[nodiscard]] std::filesystem::path staging_about_file(const std::filesystem::path& layout);

}  // namespace hwimg::image
