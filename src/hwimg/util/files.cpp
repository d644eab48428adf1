#include "hwimg/util/files.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <csignal>
#include <cstdlib>
#include <random>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hwimg::util {

void UniqueFd::reset(int fd) {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
  m_fd = fd;
}

std::string errno_text(int error_number) {
  return std::strerror(error_number);
}

Result<std::string> read_file(const fs::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return fail("failed to open {}: {}", path.string(), errno_text(errno));
  }
  std::string data;
  char buffer[65536];
  while (true) {
    const auto n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail("failed to read {}: {}", path.string(), errno_text(errno));
    }
    if (n == 0) {
      return data;
    }
    data.append(buffer, static_cast<std::size_t>(n));
  }
}

namespace {

std::string_view file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

}  // namespace

Result<UniqueFd> open_regular_file(const fs::path& path) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return fail("failed to open {}: {}", path.string(), errno_text(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return fail("failed to read {}: {}", path.string(), errno_text(errno));
  if (!S_ISREG(info.st_mode)) {
    return fail("failed to read {}: it is {}, not a regular file", path.string(), file_kind(info.st_mode));
  }
  return fd;
}

Result<std::string> read_regular_file(const fs::path& path, std::size_t max_size) {
  HWIMG_TRY_ASSIGN(const auto fd, open_regular_file(path));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return fail("failed to read {}: {}", path.string(), errno_text(errno));
  const auto too_large = [&] {
    return fail("failed to read {}: it holds more than the {} bytes expected", path.string(), max_size);
  };
  if (static_cast<std::uintmax_t>(info.st_size) > max_size) return too_large();
  const auto limit = max_size + 1;  // one byte more than allowed tells a file that grew since fstat
  std::string data(std::min(limit, static_cast<std::size_t>(info.st_size) + 1), '\0');
  std::size_t filled = 0;
  while (filled < limit) {
    if (filled == data.size()) data.resize(std::min(limit, data.size() * 2));
    const auto n = ::read(fd.get(), data.data() + filled, data.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("failed to read {}: {}", path.string(), errno_text(errno));
    if (n == 0) break;
    filled += static_cast<std::size_t>(n);
  }
  if (filled > max_size) return too_large();
  data.resize(filled);
  return data;
}

fs::path temporary_sibling(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  thread_local std::mt19937_64 random{std::random_device{}()};
  return path.parent_path() /
         fmt::format(".{}.tmp-{}-{}-{:x}", path.filename().string(), ::getpid(), counter++, random());
}

Result<void> make_directories(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) {
    return fail("failed to create directory {}: {}", path.string(), ec.message());
  }
  return {};
}

Result<void> make_private_directory(const fs::path& path) {
  if (path.has_parent_path()) HWIMG_TRY(make_directories(path.parent_path()));
  if (::mkdir(path.c_str(), 0700) == 0) return {};
  if (errno != EEXIST) return fail("failed to create directory {}: {}", path.string(), errno_text(errno));
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return fail("failed to read {}: {}", path.string(), errno_text(errno));
  if (!S_ISDIR(info.st_mode)) return fail("failed to create directory {}: a file of that name exists", path.string());
  if ((info.st_mode & 077) != 0 && ::chmod(path.c_str(), info.st_mode & 07700) != 0) {
    return fail("failed to set the mode of {}: {}", path.string(), errno_text(errno));
  }
  return {};
}

Result<void> fsync_directory(const fs::path& directory) {
  UniqueFd fd(::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid() || ::fsync(fd.get()) != 0) {
    return fail("failed to sync directory {}: {}", directory.string(), errno_text(errno));
  }
  return {};
}

namespace {

// Writes all of `data`; false with errno set on failure.
bool write_all(int fd, std::string_view data) {
  std::size_t written = 0;
  while (written < data.size()) {
    const auto n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Result<void> copy_file_contents(const fs::path& from, const fs::path& to) {
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return fail("failed to open {}: {}", from.string(), errno_text(errno));
  UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!out.valid()) return fail("failed to create {}: {}", to.string(), errno_text(errno));
  const auto remove_and_fail = [&](std::string_view verb) -> Result<void> {
    const int saved = errno;
    ::unlink(to.c_str());
    return fail("failed to {} {} to {}: {}", verb, from.string(), to.string(), errno_text(saved));
  };
  bool plain_copy = false;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = 0;
    if (!plain_copy) {
      n = ::copy_file_range(in.get(), nullptr, out.get(), nullptr, std::size_t{1} << 30, 0);
      // Filesystems and kernels that cannot do it say so before any byte is copied.
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        plain_copy = true;
        continue;
      }
    } else {
      n = ::read(in.get(), buffer, sizeof buffer);
      if (n > 0 && !write_all(out.get(), std::string_view(buffer, static_cast<std::size_t>(n)))) {
        return remove_and_fail("copy");
      }
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return remove_and_fail("copy");
    if (n == 0) break;
  }
  if (::fsync(out.get()) != 0) return remove_and_fail("sync the copy of");
  return {};
}

Result<void> write_file_durable(const fs::path& path, std::string_view data, unsigned mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (!fd.valid()) {
    return fail("failed to create {}: {}", path.string(), errno_text(errno));
  }
  const auto remove_and_fail = [&](std::string_view verb) -> Result<void> {
    const int saved = errno;
    ::unlink(path.c_str());
    return fail("failed to {} {}: {}", verb, path.string(), errno_text(saved));
  };
  // O_CREAT's mode is filtered by the umask; callers such as `login` need the exact mode.
  if (::fchmod(fd.get(), mode) != 0) {
    return remove_and_fail("set the mode of");
  }
  if (!write_all(fd.get(), data)) {
    return remove_and_fail("write");
  }
  if (::fsync(fd.get()) != 0) {
    return remove_and_fail("sync");
  }
  return {};
}

Result<void> write_file_atomic(const fs::path& path, std::string_view data, unsigned mode) {
  const auto temporary = temporary_sibling(path);
  HWIMG_TRY(write_file_durable(temporary, data, mode));
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    return fail("failed to rename into place {}: {}", path.string(), errno_text(saved));
  }
  return fsync_directory(path.parent_path());
}

void remove_orphaned_temporaries(const fs::path& directory, std::string_view prefix, std::string_view pid_marker) {
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    const auto marker = name.find(pid_marker);
    if (!name.starts_with(prefix) || marker == std::string::npos) continue;
    const auto pid = std::strtol(name.c_str() + marker + pid_marker.size(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
}

Result<void> remove_tree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (!ec) return {};
  // Open up every directory the tree's owner may not write or enter, then try again.
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    ::chmod(path.c_str(), (info.st_mode & 07777) | S_IRWXU);
    std::error_code walk;
    for (fs::recursive_directory_iterator it(path, walk), end; !walk && it != end; it.increment(walk)) {
      if (::lstat(it->path().c_str(), &info) == 0 && S_ISDIR(info.st_mode) && (info.st_mode & S_IRWXU) != S_IRWXU) {
        ::chmod(it->path().c_str(), (info.st_mode & 07777) | S_IRWXU);
      }
    }
  }
  fs::remove_all(path, ec);
  if (ec) return fail("failed to remove {}: {}", path.string(), ec.message());
  return {};
}

namespace {

enum class LockWait { block, give_up };

// The lock file opened and locked; an invalid descriptor when another holds a conflicting lock and
// `wait` gives up.
Result<UniqueFd> lock_file(const fs::path& path, LockMode mode, LockWait wait) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return fail("failed to open lock file {}: {}", path.string(), errno_text(errno));
  }
  const int operation = (mode == LockMode::shared ? LOCK_SH : LOCK_EX) | (wait == LockWait::block ? 0 : LOCK_NB);
  while (::flock(fd.get(), operation) != 0) {
    if (errno == EWOULDBLOCK && wait == LockWait::give_up) return UniqueFd();
    if (errno != EINTR) {
      return fail("failed to lock {}: {}", path.string(), errno_text(errno));
    }
  }
  return fd;
}

}  // namespace

Result<FileLock> FileLock::acquire(const fs::path& path, LockMode mode) {
  HWIMG_TRY_ASSIGN(auto fd, lock_file(path, mode, LockWait::block));
  return FileLock(std::move(fd));
}

Result<std::optional<FileLock>> FileLock::try_acquire(const fs::path& path, LockMode mode) {
  HWIMG_TRY_ASSIGN(auto fd, lock_file(path, mode, LockWait::give_up));
  if (!fd.valid()) return std::optional<FileLock>();
  return std::optional<FileLock>(FileLock(std::move(fd)));
}

Result<TempDir> TempDir::create(const fs::path& parent, std::string_view prefix) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string pattern = (parent / (std::string(prefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return fail("failed to create a temporary directory in {}: {}", parent.string(), errno_text(errno));
  }
  return TempDir(fs::path(pattern));
}

TempDir::TempDir(TempDir&& other) noexcept : m_path(std::exchange(other.m_path, {})) {}

TempDir::~TempDir() {
  if (!m_path.empty()) {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
}

}  // namespace hwimg::util
