#include "hwimg/registry/detail/blob_locations.hpp"


#include "hwimg/util/files.hpp"
#include "hwimg/util/json_reader.hpp"

namespace hwimg::registry {
using json = util::json::Json;

BlobLocations::Record BlobLocations::read(const std::filesystem::path& file) {
  Record record;
  auto text = util::read_file(file);
  if (!text) return record;
  const auto doc = util::json::parse_object(*text);
  if (!doc) return record;
  for (const auto& [registry, blobs] : doc->items()) {
    if (!blobs.is_object()) continue;
    for (const auto& [digest, repositories] : blobs.items()) {
      if (!repositories.is_array()) continue;
      for (const auto& repository : repositories) {
        if (auto name = util::json::as_string(repository)) record[registry][digest].insert(std::move(*name));
      }
    }
  }
  return record;
}

BlobLocations BlobLocations::load(const std::filesystem::path& file) {
  BlobLocations out;
  out.m_file = file;
  out.m_record = read(file);
  return out;
}

std::optional<std::string> BlobLocations::other_repository(const std::string& registry, const oci::Digest& digest,
                                                           const std::string& except) const {
  const auto r = m_record.find(registry);
  if (r == m_record.end()) return std::nullopt;
  const auto d = r->second.find(digest.str());
  if (d == r->second.end()) return std::nullopt;
  for (const auto& repository : d->second) {
    if (repository != except) return repository;
  }
  return std::nullopt;
}

bool BlobLocations::holds(const std::string& registry, const oci::Digest& digest, const std::string& repository) const {
  const auto r = m_record.find(registry);
  if (r == m_record.end()) return false;
  const auto d = r->second.find(digest.str());
  return d != r->second.end() && d->second.contains(repository);
}

void BlobLocations::record(const std::string& registry, const oci::Digest& digest, const std::string& repository) {
  m_record[registry][digest.str()].insert(repository);
}

Result<void> BlobLocations::save() const {
  if (m_file.empty()) return {};
  HWIMG_TRY(util::make_directories(m_file.parent_path()));
  HWIMG_TRY_ASSIGN(const auto lock, util::FileLock::acquire(m_file.parent_path() / "registry-blobs.lock"));
  auto merged = read(m_file);
  for (const auto& [registry, blobs] : m_record) {
    for (const auto& [digest, repositories] : blobs) merged[registry][digest].insert(repositories.begin(), repositories.end());
  }
  json doc = json::object();
  for (const auto& [registry, blobs] : merged) {
    for (const auto& [digest, repositories] : blobs) doc[registry][digest] = repositories;
  }
  return util::write_file_atomic(m_file, doc.dump() + "\n");
}

}  // namespace hwimg::registry
