#pragma once
// Reads the regular files of one layer blob (a tar, gzip- or zstd-compressed or not) without
// unpacking it: the builder's device-code check reads base layers this way, once per digest.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "hwimg/util/error.hpp"

namespace hwimg::image {

// Whether a file is wanted, from its path in the image (no leading '/') and its first bytes (up to
// 20; fewer for a shorter file). Only wanted files are read whole.
using LayerFileFilter = std::function<bool(std::string_view path, std::span<const std::byte> head)>;
using LayerFileVisitor = std::function<Result<void>(std::string_view path, std::string_view bytes)>;
// Called for each extended attribute of each entry, whatever its type, with the entry's path.
using LayerXattrVisitor = std::function<void(std::string_view path, std::string_view name)>;

// Calls `visit` for each wanted regular file of `blob`, in archive order, its path read by
// clean_entry_path (layer_entry.hpp): an entry with ".." fails the read. Hard links, symlinks and
// other entries are skipped; `name` names the layer in errors. `xattrs`, when set, sees the
// extended attributes of every entry.
[[nodiscard]] Result<void> read_layer_files(const std::filesystem::path& blob, std::string_view name,
                                            const LayerFileFilter& wanted, const LayerFileVisitor& visit,
                                            const LayerXattrVisitor& xattrs = {});

}  // namespace hwimg::image
