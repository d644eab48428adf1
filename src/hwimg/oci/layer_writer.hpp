#pragma once
// Packs a host directory (or file) into a reproducible tar layer at a path inside the image.
// Reproducible: entries sorted byte-wise, parents first, uid/gid 0 with empty names, one fixed
// mtime, permissions kept, pax headers only where needed, no atime/ctime, no trailing padding.

#include <filesystem>
#include <string>
#include <vector>

#include "hwimg/oci/blob_writer.hpp"

namespace hwimg::oci {

struct LayerSource {
  std::filesystem::path from;  // directory or file on the host
  std::string to;              // absolute path inside the image
};

struct LayerOptions {
  CompressionOptions compression;
  std::int64_t mtime = 0;  // SOURCE_DATE_EPOCH, or 0
};

// "/opt/x/../y" -> "opt/y"; fails when the path would leave the image root.
[[nodiscard]] Result<std::string> normalize_image_path(std::string_view path);

[[nodiscard]] Result<WrittenLayer> write_layer(const Layout& layout, const std::vector<LayerSource>& sources,
                                               const LayerOptions& options);

}  // namespace hwimg::oci
