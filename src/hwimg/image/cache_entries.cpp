#include "hwimg/image/cache_entries.hpp"

#include <algorithm>
#include <cerrno>
#include <utility>

#include <sys/stat.h>
#include <unistd.h>

#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::image {
namespace fs = std::filesystem;

namespace {

bool is_sha256_hex(std::string_view name) {
  return name.size() == 64 && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::chrono::system_clock::time_point modified(const struct stat& info) {
  return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::seconds(info.st_mtim.tv_sec) + std::chrono::nanoseconds(info.st_mtim.tv_nsec)));
}

std::uint64_t allocated(const struct stat& info) { return static_cast<std::uint64_t>(info.st_blocks) * 512; }

// The names in `directory` (none when it is missing), without temporaries and hidden entries.
std::vector<std::string> names_in(const fs::path& directory) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (!name.starts_with('.')) names.push_back(std::move(name));
  }
  return names;
}

void add_blobs(const fs::path& root, std::vector<CacheEntry>& entries) {
  for (const auto& name : names_in(root / "blobs" / "sha256")) {
    struct stat info {};
    if (!is_sha256_hex(name) || ::lstat((root / "blobs" / "sha256" / name).c_str(), &info) != 0 ||
        !S_ISREG(info.st_mode)) {
      continue;
    }
    entries.push_back({CacheEntryKind::blob, "blobs/sha256/" + name, allocated(info), modified(info), {}, false});
  }
}

// Needs files are written once and read many times: their age is when they were written.
void add_code_needs(const fs::path& root, std::vector<CacheEntry>& entries) {
  const auto directory = root / "code-needs" / "sha256";
  for (const auto& name : names_in(directory)) {
    struct stat info {};
    if (!name.ends_with(".json") || !is_sha256_hex(name.substr(0, name.size() - 5)) ||
        ::lstat((directory / name).c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
      continue;
    }
    entries.push_back({CacheEntryKind::needs, "code-needs/sha256/" + name, allocated(info), modified(info), {}, false});
  }
}

// A root filesystem was last used when its marker was (unpacked_rootfs marks it on each use); one
// without a marker (a crash before it was written) when the directory last changed.
void add_root_filesystems(const fs::path& root, std::vector<CacheEntry>& entries) {
  const auto directory = root / "rootfs";
  for (const auto& name : names_in(directory)) {
    struct stat info {};
    if (!is_sha256_hex(name) || ::lstat((directory / name).c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
      continue;
    }
    CacheEntry entry{CacheEntryKind::rootfs, "rootfs/" + name, disk_usage(directory / name), modified(info), {}, false};
    struct stat marker {};
    if (::lstat((directory / (name + ".layers")).c_str(), &marker) == 0) {
      entry.bytes += allocated(marker);
      entry.last_used = modified(marker);
    }
    entries.push_back(std::move(entry));
  }
}

void add_staging_layouts(const fs::path& root, std::vector<CacheEntry>& entries) {
  const auto directory = root / "staging";
  for (const auto& name : names_in(directory)) {
    struct stat info {};
    if (::lstat((directory / name).c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) continue;
    CacheEntry entry{CacheEntryKind::staging, "staging/" + name, disk_usage(directory / name), modified(info), {},
                     false};
    if (auto about = util::read_regular_file(staging_about_file(directory / name), 4096)) {
      entry.about = util::trim(*about);
    }
    entries.push_back(std::move(entry));
  }
}

}  // namespace

std::string_view kind_name(CacheEntryKind kind) {
  switch (kind) {
    case CacheEntryKind::blob: return "blob";
    case CacheEntryKind::rootfs: return "rootfs";
    case CacheEntryKind::staging: return "staging";
    case CacheEntryKind::needs: return "code-needs";
  }
  return "?";
}

fs::path staging_about_file(const fs::path& layout) { return layout / ".hwimg" / "recipe"; }

std::uint64_t disk_usage(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return 0;
  std::uint64_t total = allocated(info);
  if (!S_ISDIR(info.st_mode)) return total;
  std::set<std::pair<dev_t, ino_t>> linked;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (::lstat(it->path().c_str(), &info) != 0) continue;
    if (!S_ISDIR(info.st_mode) && info.st_nlink > 1 && !linked.emplace(info.st_dev, info.st_ino).second) continue;
    total += allocated(info);
  }
  return total;
}

std::set<std::string> pinned_entries(const fs::path& root, StaleLeases stale) {
  std::set<std::string> pinned;
  for (const auto& name : names_in(root / "leases")) {
    const auto file = root / "leases" / name;
    auto free = util::FileLock::try_acquire(file, util::LockMode::shared);
    if (free && *free) {
      // Nobody holds it: its process ended.
      if (stale == StaleLeases::reclaim) ::unlink(file.c_str());
      continue;
    }
    // A lease lists a few entries per image a build uses; a megabyte is thousands of images.
    const auto text = util::read_regular_file(file, std::size_t{1} << 20);
    if (!text) continue;
    for (auto& line : util::split(*text, '\n')) {
      if (!line.empty()) pinned.insert(std::move(line));
    }
  }
  return pinned;
}

Result<std::vector<CacheEntry>> list_cache(const fs::path& root, StaleLeases stale) {
  std::vector<CacheEntry> entries;
  std::error_code ec;
  if (!fs::exists(root, ec)) return entries;
  if (!fs::is_directory(root, ec)) return fail("failed to list the cache {}: it is not a directory", root.string());
  if (::access(root.c_str(), R_OK | X_OK) != 0) {
    return fail("failed to list the cache {}: {}", root.string(), util::errno_text(errno));
  }
  add_blobs(root, entries);
  add_code_needs(root, entries);
  add_root_filesystems(root, entries);
  add_staging_layouts(root, entries);
  const auto pinned = pinned_entries(root, stale);
  for (auto& entry : entries) entry.in_use = pinned.contains(entry.name);
  std::sort(entries.begin(), entries.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return std::tie(a.last_used, a.name) < std::tie(b.last_used, b.name);
  });
  return entries;
}

}  // namespace hwimg::image
