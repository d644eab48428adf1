#pragma once
// What a build step in a builder image sees (docs/recipe.md#build-image): a scratch root (an empty
// directory for runc, a tmpfs for bwrap) holding each top-level entry of the image's cached root
// filesystem bound read-only (symlinks such as Debian's /bin -> usr/bin recreated as symlinks),
// /proc, a minimal /dev, a /tmp tmpfs, and the host directories of the step bound read-write at
// their own paths. Runners create mount points only in the scratch root, never in the cache.

#include <filesystem>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::build {

enum class MountKind { read_only_bind, read_write_bind, directory, symlink, proc, dev, tmpfs };

struct ContainerMount {
  MountKind kind = MountKind::directory;
  std::filesystem::path destination;  // absolute, inside the container
  std::filesystem::path source;       // a bind's host path, or a symlink's target
};

// The mounts in the order they are made: each after the directory that holds it. A directory of the
// image on the way to a host directory is recreated in the scratch root with its other entries
// bound one by one, so the mount point is made there. Fails when a host directory is "/", under
// /proc or /dev, or would go through a symlink or a file of the image.
[[nodiscard]] Result<std::vector<ContainerMount>> plan_container_mounts(
    const std::filesystem::path& rootfs, const std::vector<std::filesystem::path>& host_directories);

}  // namespace hwimg::build
