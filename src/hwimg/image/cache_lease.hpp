#pragma once
// What a process is using in the user's cache (docs/cache.md), so that `hwimg cache prune` and
// the size cap applied after each build never remove it while the process runs.
//
// Each process that uses the cache holds a lease: <cache>/leases/<pid>-<n>, locked (flock) for as
// long as the lease lives, listing the entries it pinned ("blobs/sha256/<hex>", "rootfs/<hex>",
// "staging/<key>"). A prune holds <cache>/locks/prune exclusively while it decides and removes; a
// pin holds it shared while it writes its line. So a pin either lands before a prune reads the
// leases (the entry stays) or after the prune is done (the caller, which pins before it looks,
// finds the entry gone and makes it again). A lease whose file nobody holds locked belongs to a
// process that ended; the next prune removes it.
//
//   CacheLease lease(cache_root);
//   HWIMG_TRY(lease.pin(cache_entry::blob(digest)));   // then check that the blob is there

#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "hwimg/oci/digest.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::image {

// The names of cache entries, relative to the cache's root.
namespace cache_entry {
[[nodiscard]] std::string blob(const oci::Digest& digest);
[[nodiscard]] std::string rootfs(const oci::Digest& manifest);
[[nodiscard]] std::string staging(std::string_view key);
}  // namespace cache_entry

class CacheLease {
public:
  // Touches nothing until the first pin: a build that uses no cache entry leaves no lease behind.
  explicit CacheLease(std::filesystem::path root) : m_root(std::move(root)) {}
  CacheLease(const CacheLease&) = delete;
  CacheLease& operator=(const CacheLease&) = delete;
  ~CacheLease();

  [[nodiscard]] const std::filesystem::path& root() const { return m_root; }

  // Keeps `entry` from every prune until this lease ends. Pin before looking at the entry.
  [[nodiscard]] Result<void> pin(const std::string& entry);

private:
  std::filesystem::path m_root;
  std::mutex m_mutex;
  std::optional<util::FileLock> m_lock;  // held on m_file, for as long as the lease lives
  std::filesystem::path m_file;
  std::set<std::string> m_pinned;
};

// Marks `path` (a cache entry, or the file standing for it) as used now: least recently used
// entries go first when the cache is over its cap. Failing to mark is harmless, so not reported.
void mark_used(const std::filesystem::path& path);

}  // namespace hwimg::image
