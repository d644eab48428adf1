#pragma once
// The user's content-addressed cache of blobs fetched from registries (base images, builder
// images): `$XDG_CACHE_HOME/hwimg` or `--cache DIR`, shared by every build. Each blob is written
// to a temporary file, verified against its digest and renamed in, so a killed fetch leaves
// nothing behind but a temporary that the next run reclaims; concurrent builds fetch a blob once.
// Its directories are 0700 and its files 0600: what it holds is its user's alone. Every blob it
// hands out is pinned in its lease (cache_lease.hpp), so no prune removes it while it is in use.

#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "hwimg/image/cache_lease.hpp"
#include "hwimg/image/reader.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::image {

class BlobCache {
public:
  // Creates the directory layout under `root` (0700, an existing root made so) and reclaims what
  // killed fetches left. What it hands out is pinned in `lease` (a lease of its own when null): a
  // build passes the one it holds until it has applied the cache's cap.
  [[nodiscard]] static Result<std::unique_ptr<BlobCache>> open(const std::filesystem::path& root,
                                                               util::Output& output = util::null_output(),
                                                               std::shared_ptr<CacheLease> lease = nullptr);

  [[nodiscard]] const std::filesystem::path& root() const { return m_root; }
  [[nodiscard]] CacheLease& lease() const { return *m_lease; }
  [[nodiscard]] std::filesystem::path blob_path(const oci::Digest& digest) const;

  // The cached file holding the blob, fetched through `reader` when missing. A cached copy that no
  // longer matches its digest is fetched again, with a warning naming it. Checked once per process.
  [[nodiscard]] Result<std::filesystem::path> get(ImageReader& reader, const oci::Descriptor& descriptor);

  // An index, manifest or config: the cached copy when there is a good one, else read through
  // `reader` (verified) and kept. A cached copy that does not match is read again, with a warning.
  [[nodiscard]] Result<std::string> read_document(ImageReader& reader, const oci::Descriptor& descriptor);

private:
  BlobCache(std::filesystem::path root, util::Output& output, std::shared_ptr<CacheLease> lease)
      : m_root(std::move(root)), m_output(output), m_lease(std::move(lease)) {}
  [[nodiscard]] Result<void> fetch(ImageReader& reader, const oci::Descriptor& descriptor);

  std::filesystem::path m_root;
  util::Output& m_output;
  std::shared_ptr<CacheLease> m_lease;
  std::mutex m_mutex;
  std::set<oci::Digest> m_verified;  // checked by this process already
};

// $XDG_CACHE_HOME/hwimg, else ~/.cache/hwimg: where the cache is unless --cache says otherwise.
[[nodiscard]] std::filesystem::path default_cache_root(const char* xdg_cache_home, const char* home);

}  // namespace hwimg::image
