#pragma once
// `hwimg serve configure-node`: the node's runtime configuration that makes `hwimg serve` the
// resolver of the mirrored registries' tags (docs/serve.md#configure-node): one containerd
// hosts.toml per upstream, one CRI-O/podman registries.conf.d drop-in. What was there is kept
// beside it and put back on removal.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hwimg/serve/upstreams.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::serve {

struct NodeConfigOptions {
  std::vector<Upstream> upstreams;
  std::string listen;                                 // the mirror's address as the runtime reaches it
  std::optional<std::filesystem::path> containerd_dir;  // containerd's config_path, such as /etc/containerd/certs.d
  std::optional<std::filesystem::path> crio_dir;        // a registries.conf.d directory
  // Repositories CRI-O and podman pull from their registry itself, not through the mirror: the
  // mirror's own image, which must be pullable while the mirror is down (--direct).
  std::vector<std::string> direct;
};

// The first line of every file configure-node writes: removal touches only files that start with it.
inline constexpr std::string_view node_config_marker =
    "# Written by hwimg serve configure-node; `hwimg serve configure-node --remove` restores what was here.";
// Beside a file it replaced: `hosts.toml.hwimg-backup`.
inline constexpr std::string_view node_config_backup_suffix = ".hwimg-backup";
// The CRI-O/podman drop-in's name in --crio-dir.
inline constexpr std::string_view crio_drop_in_name = "50-hwimg-serve.conf";

// The hosts.toml of docs/serve.md#containerd for `upstream`: tags resolved by the mirror alone.
[[nodiscard]] std::string containerd_hosts_toml(const Upstream& upstream, std::string_view listen);
// The drop-in of docs/serve.md#cri-o-and-podman: each upstream's location rewritten to the mirror's
// path form, and each `direct` repository (registry/repository of an upstream) left to its registry.
// An upstream with a port needs a name (NAME=HOST:PORT): a path component holds none.
[[nodiscard]] Result<std::string> crio_drop_in(const std::vector<Upstream>& upstreams, std::string_view listen,
                                               const std::vector<std::string>& direct = {});

enum class FileAction { written, updated, unchanged, restored, removed, left };
struct FileChange {
  std::filesystem::path path;
  FileAction action = FileAction::unchanged;
  bool backed_up = false;  // written over a file not ours, kept beside it
};

// Writes every file (atomically), backing up a file that was not written by configure-node; a
// hosts.toml of ours for a registry no longer listed is removed as by remove_node_config.
[[nodiscard]] Result<std::vector<FileChange>> configure_node(const NodeConfigOptions& options);
// Removes the files configure-node wrote in the directories given, restoring their backups.
[[nodiscard]] Result<std::vector<FileChange>> remove_node_config(const NodeConfigOptions& options);

// "written /etc/containerd/certs.d/registry.example.org/hosts.toml", one line per change.
[[nodiscard]] std::string describe(const FileChange& change);

}  // namespace hwimg::serve
