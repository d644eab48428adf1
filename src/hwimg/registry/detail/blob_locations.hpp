#pragma once
// Which repositories of a registry received which blobs from this layout, remembered in the
// layout's state directory, so a later push to another repository can mount instead of upload.
// It is only a hint: a wrong entry costs one mount attempt that falls back to an upload.

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "hwimg/oci/digest.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::registry {

class BlobLocations {
public:
  // An unreadable or missing file gives an empty record; an empty path, one that is never saved.
  [[nodiscard]] static BlobLocations load(const std::filesystem::path& file);

  // A repository of `registry` other than `except` known to hold the blob.
  [[nodiscard]] std::optional<std::string> other_repository(const std::string& registry, const oci::Digest& digest,
                                                            const std::string& except) const;
  // Whether `repository` of `registry` is known to hold the blob.
  [[nodiscard]] bool holds(const std::string& registry, const oci::Digest& digest, const std::string& repository) const;
  void record(const std::string& registry, const oci::Digest& digest, const std::string& repository);
  // Merges with the file's current content and writes it atomically.
  [[nodiscard]] Result<void> save() const;

private:
  using Record = std::map<std::string, std::map<std::string, std::set<std::string>>>;
  [[nodiscard]] static Record read(const std::filesystem::path& file);
  std::filesystem::path m_file;
  Record m_record;  // registry -> digest -> repositories
};

}  // namespace hwimg::registry
