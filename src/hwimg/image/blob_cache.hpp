#pragma once
// The user's content-addressed cache of blobs fetched from registries (base images, builder
// images): `$XDG_CACHE_HOME/hwimg` or `--cache DIR`, shared by every build. Each blob is written
// to a temporary file, verified against its digest and renamed in, so a killed fetch leaves
// nothing behind but a temporary that the next run reclaims; concurrent builds fetch a blob once.
// Its directories are 0700 and its files 0600: what it holds is its user's alone.

#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "hwimg/image/reader.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::image {

class BlobCache {
public:
  // Creates the directory layout under `root` (0700, an existing root made so) and reclaims what
  // killed fetches left.
  [[nodiscard]] static Result<std::unique_ptr<BlobCache>> open(const std::filesystem::path& root,
                                                               util::Output& output = util::null_output());

  [[nodiscard]] const std::filesystem::path& root() const { return m_root; }
  [[nodiscard]] std::filesystem::path blob_path(const oci::Digest& digest) const;

  // The cached file holding the blob, fetched through `reader` when missing. A cached copy that no
  // longer matches its digest is fetched again, with a warning naming it. Checked once per process.
  [[nodiscard]] Result<std::filesystem::path> get(ImageReader& reader, const oci::Descriptor& descriptor);

  // An index, manifest or config: the cached copy when there is a good one, else read through
  // `reader` (verified) and kept. A cached copy that does not match is read again, with a warning.
  [[nodiscard]] Result<std::string> read_document(ImageReader& reader, const oci::Descriptor& descriptor);

private:
  BlobCache(std::filesystem::path root, util::Output& output) : m_root(std::move(root)), m_output(output) {}
  [[nodiscard]] Result<void> fetch(ImageReader& reader, const oci::Descriptor& descriptor);

  std::filesystem::path m_root;
  util::Output& m_output;
  std::mutex m_mutex;
  std::set<oci::Digest> m_verified;  // checked by this process already
};

// $XDG_CACHE_HOME/hwimg, else ~/.cache/hwimg: where the cache is unless --cache says otherwise.
[[nodiscard]] std::filesystem::path default_cache_root(const char* xdg_cache_home, const char* home);

}  // namespace hwimg::image
