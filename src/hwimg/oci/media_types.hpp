#pragma once
// Media types of the OCI image spec and their Docker schema2 equivalents.

#include <string_view>

namespace hwimg::oci::media_type {

inline constexpr std::string_view index = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view manifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view config = "application/vnd.oci.image.config.v1+json";
inline constexpr std::string_view layer_tar = "application/vnd.oci.image.layer.v1.tar";
inline constexpr std::string_view layer_gzip = "application/vnd.oci.image.layer.v1.tar+gzip";
inline constexpr std::string_view layer_zstd = "application/vnd.oci.image.layer.v1.tar+zstd";
// The empty JSON object `{}`: an artifact's config when it has none (image-spec 1.1).
inline constexpr std::string_view empty = "application/vnd.oci.empty.v1+json";
inline constexpr std::string_view docker_manifest_list =
    "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr std::string_view docker_manifest = "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr std::string_view docker_config = "application/vnd.docker.container.image.v1+json";
inline constexpr std::string_view docker_layer_gzip = "application/vnd.docker.image.rootfs.diff.tar.gzip";

[[nodiscard]] constexpr bool is_index(std::string_view type) {
  return type == index || type == docker_manifest_list;
}
[[nodiscard]] constexpr bool is_manifest(std::string_view type) {
  return type == manifest || type == docker_manifest;
}

}  // namespace hwimg::oci::media_type
