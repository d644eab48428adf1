#include "hwimg/image/cache_lease.hpp"

#include <cerrno>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace hwimg::image {
namespace fs = std::filesystem;

namespace cache_entry {
std::string blob(const oci::Digest& digest) { return "blobs/sha256/" + digest.hex(); }
std::string rootfs(const oci::Digest& manifest) { return "rootfs/" + manifest.hex(); }
std::string staging(std::string_view key) { return "staging/" + std::string(key); }
}  // namespace cache_entry

CacheLease::~CacheLease() {
  // An ended lease pins nothing; its file goes now rather than at the next prune.
  if (m_lock) ::unlink(m_file.c_str());
}

Result<void> CacheLease::pin(const std::string& entry) {
  std::lock_guard guard(m_mutex);
  if (m_pinned.contains(entry)) return {};
  const auto what = fmt::format("failed to use {} in the cache {}", entry, m_root.string());
  HWIMG_TRY(with_context(util::make_private_directory(m_root / "locks"), what));
  // Shared with other pins, exclusive with a prune: see the header.
  HWIMG_TRY_ASSIGN(const auto no_prune, with_context(util::FileLock::acquire(m_root / "locks" / "prune",
                                                                               util::LockMode::shared),
                                                      what));
  if (!m_lock) {
    HWIMG_TRY(with_context(util::make_private_directory(m_root / "leases"), what));
    auto pattern = (m_root / "leases" / fmt::format("{}-XXXXXX", ::getpid())).string();
    util::UniqueFd created(::mkostemp(pattern.data(), O_CLOEXEC));
    if (!created.valid()) return fail("{}: {}", what, util::errno_text(errno));
    HWIMG_TRY_ASSIGN(m_lock, with_context(util::FileLock::acquire(pattern), what));
    m_file = pattern;
  }
  util::UniqueFd file(::open(m_file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  const auto line = entry + "\n";
  if (!file.valid() || ::write(file.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    return fail("{}: {}", what, util::errno_text(errno));
  }
  m_pinned.insert(entry);
  return {};
}

void mark_used(const fs::path& path) { ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

}  // namespace hwimg::image
