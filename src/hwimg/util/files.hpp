#pragma once
// File helpers with the durability rules the layout store relies on.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "hwimg/util/error.hpp"
#include "hwimg/util/fd.hpp"

namespace hwimg::util {

namespace fs = std::filesystem;

[[nodiscard]] Result<std::string> read_file(const fs::path& path);

// `path` opened for reading when it is a regular file (symlinks followed); anything else, a FIFO
// or a device such as /dev/zero, is refused without waiting on it: "failed to read P: it is a
// FIFO, not a regular file". For files others may have put there (image layouts).
[[nodiscard]] Result<UniqueFd> open_regular_file(const fs::path& path);

// The content of the regular file `path`, refused without reading it when it holds more than
// `max_size` bytes, and never more than that read.
[[nodiscard]] Result<std::string> read_regular_file(const fs::path& path, std::size_t max_size);

// Writes to a temporary file beside `path`, fsyncs it, renames it over `path` and fsyncs the
// directory, so a crash leaves either the old or the new content, never a mix.
[[nodiscard]] Result<void> write_file_atomic(const fs::path& path, std::string_view data,
                                             unsigned mode = 0644);

// Creates `path` and its missing parents.
[[nodiscard]] Result<void> make_directories(const fs::path& path);

// Creates `path` and its missing parents, `path` itself with mode 0700; an existing `path` that
// its group or others could enter is made 0700. For caches that hold what only their user may read.
[[nodiscard]] Result<void> make_private_directory(const fs::path& path);

// Creates `path` (which must not exist) with `data` and fsyncs it; removes it again on failure.
// For files that are renamed into place by the caller.
[[nodiscard]] Result<void> write_file_durable(const fs::path& path, std::string_view data, unsigned mode = 0644);

// Creates `to` (which must not exist) with the bytes of `from`: copy_file_range, so the kernel
// shares extents where the filesystem can (reflinks on XFS and Btrfs), a plain copy elsewhere.
// Never a hard link: a later write to one file must not change the other.
[[nodiscard]] Result<void> copy_file_contents(const fs::path& from, const fs::path& to);

// Makes a rename or create in `directory` durable.
[[nodiscard]] Result<void> fsync_directory(const fs::path& directory);

// A unique temporary file name beside `path`, for the write-then-rename pattern.
[[nodiscard]] fs::path temporary_sibling(const fs::path& path);

// Removes what killed writers left in `directory`: entries whose name starts with `prefix` and
// carries, right after `pid_marker`, the pid of a process that no longer exists.
void remove_orphaned_temporaries(const fs::path& directory, std::string_view prefix, std::string_view pid_marker);

// Removes `path` and everything under it, not following links. Directories that their owner may
// not write (an image's read-only /proc or /sys, unpacked without root) are made writable first.
[[nodiscard]] Result<void> remove_tree(const fs::path& path);

// An advisory lock (flock) held for the object's lifetime: exclusive, or shared with other shared
// holders. The lock file is created (0600) when missing.
enum class LockMode { exclusive, shared };
class FileLock {
public:
  // Waits until the lock is free.
  [[nodiscard]] static Result<FileLock> acquire(const fs::path& path, LockMode mode = LockMode::exclusive);
  // The lock, or nothing at once when another holds one that conflicts.
  [[nodiscard]] static Result<std::optional<FileLock>> try_acquire(const fs::path& path,
                                                                   LockMode mode = LockMode::exclusive);

private:
  explicit FileLock(UniqueFd fd) : m_fd(std::move(fd)) {}
  UniqueFd m_fd;
};

// A directory removed with its content when the object goes away.
class TempDir {
public:
  [[nodiscard]] static Result<TempDir> create(const fs::path& parent, std::string_view prefix);
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  [[nodiscard]] const fs::path& path() const { return m_path; }

private:
  explicit TempDir(fs::path path) : m_path(std::move(path)) {}
  fs::path m_path;
};

// errno as text, for "failed to X: <strerror>" messages.
[[nodiscard]] std::string errno_text(int error_number);

}  // namespace hwimg::util
