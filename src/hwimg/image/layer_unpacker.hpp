#pragma once
// Image layers unpacked into a directory, lowest first, as the OCI image spec's layer format says:
// `.wh.NAME` removes NAME of a lower layer and `.wh..wh..opq` empties its directory of what lower
// layers put there. libarchive's secure extraction plus checks of its own keep every entry inside.

#include <filesystem>
#include <string>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::image {

struct LayerFile {
  std::filesystem::path path;  // a tar, gzip- or zstd-compressed or not
  std::string name;            // its digest, for messages
};

// Whose files the unpacked ones are: their owners in the layers (needs root), or the unpacking
// user's, with directories made writable for that user so later layers and removal work.
enum class Ownership { from_layers, unpacking_user };

// Unpacks `layers` into `directory` (existing, empty). An entry with ".." (clean_entry_path,
// layer_entry.hpp), a whiteout of no name (".wh.", ".wh..", ".wh..."), a path through a symlink, a
// hard link out of the root or a device node fails, naming the entry and its layer; a leading "/"
// is read as relative to the root, as Docker and containerd read it. Setuid, setgid and sticky
// bits are dropped.
[[nodiscard]] Result<void> unpack_layers(const std::vector<LayerFile>& layers, const std::filesystem::path& directory,
                                         Ownership ownership);

}  // namespace hwimg::image
