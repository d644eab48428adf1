#include "hwimg/image/blob_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "hwimg/util/files.hpp"

namespace hwimg::image {
namespace fs = std::filesystem;

namespace {

constexpr unsigned private_file_mode = 0600;

}  // namespace

std::filesystem::path default_cache_root(const char* xdg_cache_home, const char* home) {
  if (xdg_cache_home != nullptr && *xdg_cache_home == '/') return fs::path(xdg_cache_home) / "hwimg";
  return fs::path(home != nullptr && *home != '\0' ? home : "/") / ".cache" / "hwimg";
}

Result<std::unique_ptr<BlobCache>> BlobCache::open(const fs::path& root, util::Output& output,
                                                   std::shared_ptr<CacheLease> lease) {
  // Only its user may enter the cache: builder images' files and staged builds are the user's.
  const auto blobs = root / "blobs" / "sha256";
  for (const auto& directory : {root, root / "blobs", blobs, root / "locks"}) {
    HWIMG_TRY(with_context(util::make_private_directory(directory), "failed to open the cache " + root.string()));
  }
  util::remove_orphaned_temporaries(blobs, ".", ".tmp-");
  if (!lease) lease = std::make_shared<CacheLease>(root);
  return std::unique_ptr<BlobCache>(new BlobCache(root, output, std::move(lease)));
}

fs::path BlobCache::blob_path(const oci::Digest& digest) const {
  return m_root / "blobs" / "sha256" / digest.hex();
}

Result<fs::path> BlobCache::get(ImageReader& reader, const oci::Descriptor& descriptor) {
  const auto path = blob_path(descriptor.digest);
  {
    std::lock_guard lock(m_mutex);
    if (m_verified.contains(descriptor.digest)) return path;
  }
  HWIMG_TRY(m_lease->pin(cache_entry::blob(descriptor.digest)));
  // One fetcher per blob across processes; the others wait and then find it there.
  HWIMG_TRY_ASSIGN(const auto lock, util::FileLock::acquire(m_root / "locks" / descriptor.digest.hex()));
  std::error_code ec;
  if (fs::exists(path, ec)) {
    // A cached file of another size is not hashed, however large it is.
    const auto size = fs::file_size(path, ec);
    const auto actual = !ec && size != static_cast<std::uintmax_t>(descriptor.size)
                            ? fail("it is {} bytes, its descriptor says {}", size, descriptor.size)
                            : oci::digest_file(path.string());
    if (actual && actual->digest == descriptor.digest && actual->size == descriptor.size) {
      mark_used(path);
      std::lock_guard guard(m_mutex);
      m_verified.insert(descriptor.digest);
      return path;
    }
    m_output.warning(fmt::format("the cached blob {} in {} is corrupt ({}): fetching it again",
                                 descriptor.digest.str(), m_root.string(),
                                 actual ? "it hashes to " + actual->digest.str() : actual.error().message));
    fs::remove(path, ec);
  }
  HWIMG_TRY(fetch(reader, descriptor));
  std::lock_guard guard(m_mutex);
  m_verified.insert(descriptor.digest);
  return path;
}

Result<std::string> BlobCache::read_document(ImageReader& reader, const oci::Descriptor& descriptor) {
  const auto path = blob_path(descriptor.digest);
  HWIMG_TRY(m_lease->pin(cache_entry::blob(descriptor.digest)));
  std::error_code ec;
  if (fs::exists(path, ec)) {
    auto cached = util::read_regular_file(path, oci::document_limit(descriptor));
    if (cached && oci::verify_content(descriptor, *cached, m_root.string())) {
      mark_used(path);
      return cached;
    }
    m_output.warning(fmt::format("the cached document {} in {} is corrupt: reading it again", descriptor.digest.str(),
                                 m_root.string()));
  }
  HWIMG_TRY_ASSIGN(auto bytes, reader.read(descriptor));
  // Same bytes whoever writes them, so concurrent writers need no lock: the last rename wins.
  HWIMG_TRY(with_context(util::write_file_atomic(path, bytes, private_file_mode),
                         fmt::format("failed to store {} in the cache {}", descriptor.digest.str(), m_root.string())));
  return bytes;
}

Result<void> BlobCache::fetch(ImageReader& reader, const oci::Descriptor& descriptor) {
  const auto path = blob_path(descriptor.digest);
  const auto temporary = util::temporary_sibling(path);
  HWIMG_TRY(reader.copy_blob(descriptor, temporary));
  if (::chmod(temporary.c_str(), private_file_mode) != 0 || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return fail("failed to store blob {} in the cache {}: {}", descriptor.digest.str(), m_root.string(),
                util::errno_text(error));
  }
  return util::fsync_directory(path.parent_path());
}

}  // namespace hwimg::image
