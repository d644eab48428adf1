#pragma once
// An image's root filesystem on disk, for running a build step in it (docs/recipe.md#build-image):
// its layers unpacked (layer_unpacker.hpp) once per manifest digest in the user's cache and
// shared read-only by every build after that.
//
//   auto root = image::unpacked_rootfs(cache, manifest.digest, layer_digests, layers,
//                                      image::Ownership::unpacking_user);

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/image/blob_cache.hpp"
#include "hwimg/image/layer_unpacker.hpp"
#include "hwimg/oci/digest.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::image {

// <cache>/rootfs/<hex of `manifest`>: unless it is there and complete, the layers `layers` gives
// (called only then, so a cached rootfs needs no blob) are unpacked into a staging directory beside
// it and renamed in, under a lock, so concurrent builds unpack it once and a killed unpack leaves
// only a staging directory, which the next one removes. Complete means that its marker
// <hex>.layers, written last, lists `layer_digests`, the layers it is made from: a rootfs without
// it (a crash between the rename and the marker) or with other layers is unpacked again.
using LayerFiles = std::function<Result<std::vector<LayerFile>>()>;
[[nodiscard]] Result<std::filesystem::path> unpacked_rootfs(const BlobCache& cache, const oci::Digest& manifest,
                                                            const std::vector<oci::Digest>& layer_digests,
                                                            const LayerFiles& layers, Ownership ownership);

// Whether `path` (absolute, as the image sees it) names a file in the root filesystem at `root`,
// following symlinks as they resolve inside the image ("/bin/sh" through "bin -> usr/bin").
[[nodiscard]] bool exists_in_rootfs(const std::filesystem::path& root, std::string_view path);

}  // namespace hwimg::image
