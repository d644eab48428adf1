#pragma once
// One image (a manifest, its config and layers) written as a single tar that other tools load:
// an OCI image layout in a tar (skopeo's oci-archive:), or what `docker save` writes since Docker
// 25, the same layout with Docker's manifest.json beside it (docs/compatibility.md#image-archives).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hwimg/image/reader.hpp"
#include "hwimg/oci/documents.hpp"

namespace hwimg::image {

enum class ArchiveFormat { oci, docker };

struct ArchiveOptions {
  ArchiveFormat format = ArchiveFormat::oci;
  std::string ref_name;               // index.json's org.opencontainers.image.ref.name; "" for none
  std::vector<std::string> repo_tags;  // docker: "NAME:TAG", manifest.json's RepoTags
  std::int64_t mtime = 0;              // every entry's, in seconds: SOURCE_DATE_EPOCH, or 0
};

struct ArchiveSummary {
  std::size_t layers = 0;
  std::uint64_t bytes = 0;  // of the archive
};

// Docker's manifest.json for one image: [{"Config", "RepoTags", "Layers"}], each path a blob of
// the layout ("blobs/sha256/<hex>"), layers compressed as in the manifest.
[[nodiscard]] std::string docker_archive_manifest(const oci::Manifest& manifest,
                                                  const std::vector<std::string>& repo_tags);

// index.json of the archive: the one manifest, with its ref name (the tag) and its full image name
// (io.containerd.image.name), which containerd's importer and podman load name the image by.
[[nodiscard]] std::string archive_index(const oci::Descriptor& manifest, const ArchiveOptions& options);

// Writes the image `manifest` names to `output` (entries dated `options.mtime`, so the same image
// and time give the same bytes) through a temporary file beside it, renamed into place once
// complete: a failed or interrupted export leaves no partial file at `output`. Blobs are read
// through `reader`, verified, one layer at a time through a temporary directory beside it.
[[nodiscard]] Result<ArchiveSummary> write_image_archive(ImageReader& reader, const oci::Descriptor& manifest,
                                                         const ArchiveOptions& options,
                                                         const std::filesystem::path& output);

}  // namespace hwimg::image
