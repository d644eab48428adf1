#include "hwimg/image/archive_export.hpp"

#include <cerrno>
#include <cstdio>
#include <set>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "hwimg/image/documents.hpp"
#include "hwimg/oci/tar_writer.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::image {
namespace {

std::string archive_blob_path(const oci::Digest& digest) {
  return "blobs/sha256/" + digest.hex();
}

// The entries in order: the layout's marker and index, Docker's manifest, then every blob once.
Result<void> write_archive_entries(oci::TarWriter& tar, ImageReader& reader, const oci::Descriptor& root,
                                   const oci::Manifest& manifest, const ArchiveOptions& options,
                                   const std::filesystem::path& scratch) {
  HWIMG_TRY(tar.add_bytes("oci-layout", R"({"imageLayoutVersion":"1.0.0"})"));
  HWIMG_TRY(tar.add_bytes("index.json", archive_index(root, options)));
  if (options.format == ArchiveFormat::docker) {
    HWIMG_TRY(tar.add_bytes("manifest.json", docker_archive_manifest(manifest, options.repo_tags)));
  }
  HWIMG_TRY(tar.add_directory("blobs/"));
  HWIMG_TRY(tar.add_directory("blobs/sha256/"));
  HWIMG_TRY_ASSIGN(const auto manifest_bytes, reader.read(root));
  HWIMG_TRY(tar.add_bytes(archive_blob_path(root.digest), manifest_bytes));
  HWIMG_TRY_ASSIGN(const auto config_bytes, reader.read(manifest.config));
  HWIMG_TRY(tar.add_bytes(archive_blob_path(manifest.config.digest), config_bytes));
  std::set<oci::Digest> written{root.digest, manifest.config.digest};
  for (const auto& layer : manifest.layers) {
    if (!written.insert(layer.digest).second) continue;
    // Verified on its way to disk, then streamed into the tar: never a whole layer in memory.
    const auto staged = scratch / layer.digest.hex();
    HWIMG_TRY(reader.copy_blob(layer, staged));
    HWIMG_TRY(tar.add_file(archive_blob_path(layer.digest), staged));
    std::error_code ignored;
    std::filesystem::remove(staged, ignored);
  }
  return tar.finish();
}

}  // namespace

std::string docker_archive_manifest(const oci::Manifest& manifest, const std::vector<std::string>& repo_tags) {
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const auto& layer : manifest.layers) layers.push_back(archive_blob_path(layer.digest));
  const nlohmann::ordered_json item{{"Config", archive_blob_path(manifest.config.digest)},
                                    {"RepoTags", repo_tags},
                                    {"Layers", layers}};
  return nlohmann::ordered_json::array({item}).dump();
}

std::string archive_index(const oci::Descriptor& manifest, const ArchiveOptions& options) {
  // No platform: the archive holds one image, and containerd 1.6's importer drops an amd64 entry
  // whose platform names a level (v2...) (docs/compatibility.md#image-archives).
  oci::Descriptor entry{manifest.media_type, manifest.digest, manifest.size, std::nullopt, {}};
  if (!options.ref_name.empty()) entry.annotations[std::string(oci::ref_name_annotation)] = options.ref_name;
  // The image's full name, as Docker 25's `docker save` writes it in either archive: containerd
  // (Docker's image store) and podman load (libimage's nameFromAnnotations, before the ref.name,
  // which is only the tag) name a loaded image by it (docs/compatibility.md#image-archives).
  if (!options.repo_tags.empty()) {
    if (const auto name = registry::parse_reference(options.repo_tags.front())) {
      entry.annotations["io.containerd.image.name"] = name->str();
    }
  }
  oci::Index index;
  index.manifests.push_back(std::move(entry));
  return oci::to_json(index);
}

Result<ArchiveSummary> write_image_archive(ImageReader& reader, const oci::Descriptor& root,
                                           const ArchiveOptions& options, const std::filesystem::path& output) {
  const auto what = fmt::format("failed to export {}@{} to {}", reader.name(), root.digest.str(), output.string());
  HWIMG_TRY_ASSIGN(const auto manifest, with_context(read_manifest(reader, root), what));
  if (manifest.config.media_type != oci::media_type::config &&
      manifest.config.media_type != oci::media_type::docker_config) {
    return fail("{}: its config is {}, not a container image config", what, manifest.config.media_type);
  }
  const auto absolute = std::filesystem::absolute(output);
  const auto directory = absolute.parent_path();
  const auto name = absolute.filename().string();
  util::remove_orphaned_temporaries(directory, "." + name + ".tmp-", ".tmp-");
  HWIMG_TRY_ASSIGN(const auto scratch,
                   with_context(util::TempDir::create(directory, fmt::format(".{}.tmp-{}-blobs-", name, ::getpid())),
                                what));
  const auto temporary = util::temporary_sibling(absolute);
  auto written = [&]() -> Result<void> {
    HWIMG_TRY_ASSIGN(auto tar, oci::TarWriter::create(temporary, options.mtime));
    return write_archive_entries(tar, reader, root, manifest, options, scratch.path());
  }();
  if (written && ::rename(temporary.c_str(), absolute.c_str()) != 0) {
    written = fail("failed to rename into place {}: {}", output.string(), util::errno_text(errno));
  }
  if (!written) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return std::unexpected(written.error().context(what));
  }
  HWIMG_TRY(with_context(util::fsync_directory(directory), what));
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(absolute, ec);
  return ArchiveSummary{manifest.layers.size(), ec ? 0 : bytes};
}

}  // namespace hwimg::image
