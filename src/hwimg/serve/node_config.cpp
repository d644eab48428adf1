#include "hwimg/serve/node_config.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "hwimg/registry/reference.hpp"
#include "hwimg/serve/server.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::serve {
namespace {

namespace fs = std::filesystem;

// A registries.conf.d drop-in or a hosts.toml is small; anything larger was not written by us.
constexpr std::size_t max_config_size = 1 << 20;

fs::path backup_of(const fs::path& path) { return fs::path(path.string() + std::string(node_config_backup_suffix)); }

bool is_ours(std::string_view content) { return content.starts_with(node_config_marker); }

bool present(const fs::path& path) {
  std::error_code ec;
  return fs::symlink_status(path, ec).type() != fs::file_type::not_found && !ec;
}

Result<std::optional<std::string>> read_present(const fs::path& path) {
  if (!present(path)) return std::nullopt;
  HWIMG_TRY_ASSIGN(auto content, util::read_regular_file(path, max_config_size));
  return std::optional<std::string>(std::move(content));
}

Result<void> require_directory(const fs::path& directory) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    return fail("failed to write the node's configuration into {}: no such directory", directory.string());
  }
  return {};
}

Result<FileChange> install(const fs::path& path, const std::string& content) {
  FileChange change{path, FileAction::written};
  HWIMG_TRY_ASSIGN(const auto current, read_present(path));
  if (current == content) {
    change.action = FileAction::unchanged;
    return change;
  }
  if (current && is_ours(*current)) {
    change.action = FileAction::updated;
  } else if (current) {
    // A backup left from an earlier run holds the node's own file: it must not be overwritten.
    const auto backup = backup_of(path);
    if (present(backup)) {
      return fail("failed to write {}: it was not written by hwimg, and {} already holds an earlier file",
                  path.string(), backup.string());
    }
    HWIMG_TRY(util::copy_file_contents(path, backup));
    HWIMG_TRY(util::fsync_directory(path.parent_path()));
    change.backed_up = true;
  }
  auto written = util::make_directories(path.parent_path());
  if (written) written = util::write_file_atomic(path, content);
  if (!written) {
    // The node's file is still in place: a backup left beside it would refuse the next run.
    const auto backup = backup_of(path);
    if (change.backed_up && ::unlink(backup.c_str()) != 0) {
      return fail("{}; {} stays: {}", written.error().message, backup.string(), util::errno_text(errno));
    }
    return std::unexpected(std::move(written).error());
  }
  return change;
}

// nullopt: neither a file of ours nor a backup is there.
Result<std::optional<FileChange>> uninstall(const fs::path& path) {
  HWIMG_TRY_ASSIGN(const auto current, read_present(path));
  const auto backup = backup_of(path);
  const bool has_backup = present(backup);
  if (current && !is_ours(*current)) {
    if (!has_backup) return std::nullopt;
    return FileChange{path, FileAction::left};
  }
  if (has_backup) {
    if (std::rename(backup.c_str(), path.c_str()) != 0) {
      return fail("failed to restore {} from {}: {}", path.string(), backup.string(), util::errno_text(errno));
    }
    HWIMG_TRY(util::fsync_directory(path.parent_path()));
    return FileChange{path, FileAction::restored};
  }
  if (!current) return std::nullopt;
  if (::unlink(path.c_str()) != 0) return fail("failed to remove {}: {}", path.string(), util::errno_text(errno));
  HWIMG_TRY(util::fsync_directory(path.parent_path()));
  return FileChange{path, FileAction::removed};
}

// Removes our hosts.toml in every registry directory of `root` not in `keep`, and the directory
// when that leaves it empty (an empty one changes nothing for containerd).
Result<void> uninstall_hosts(const fs::path& root, const std::set<std::string>& keep,
                             std::vector<FileChange>& changes) {
  std::error_code ec;
  std::vector<fs::path> directories;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && !keep.contains(it->path().filename().string())) directories.push_back(it->path());
  }
  if (ec) return fail("failed to read the directory {}: {}", root.string(), ec.message());
  std::ranges::sort(directories);
  for (const auto& directory : directories) {
    HWIMG_TRY_ASSIGN(auto change, uninstall(directory / "hosts.toml"));
    if (!change) continue;
    if (change->action == FileAction::removed) fs::remove(directory, ec);  // kept where not empty
    changes.push_back(std::move(*change));
  }
  return {};
}

}  // namespace

std::string containerd_hosts_toml(const Upstream& upstream, std::string_view listen) {
  return fmt::format("{}\n"
                     "server = \"https://{}\"\n"
                     "capabilities = [\"pull\"]\n"
                     "\n"
                     "[host.\"http://{}\"]\n"
                     "  capabilities = [\"pull\", \"resolve\"]\n",
                     node_config_marker, upstream.registry, listen);
}

Result<std::string> crio_drop_in(const std::vector<Upstream>& upstreams, std::string_view listen,
                                 const std::vector<std::string>& direct) {
  std::vector<registry::Reference> exempt;
  for (const auto& text : direct) {
    auto reference = registry::parse_reference(text);
    const bool mirrored = reference && std::ranges::any_of(upstreams, [&](const Upstream& upstream) {
      return upstream.registry == reference->registry;
    });
    if (!mirrored || !reference->tag.empty() || reference->digest || text != reference->name()) {
      return fail_usage("invalid --direct \"{}\": expected REGISTRY/REPOSITORY of an --upstream registry, without "
                        "a tag, such as registry.example.org/hwimg",
                        text);
    }
    exempt.push_back(std::move(*reference));
  }
  auto text = fmt::format("{}\n", node_config_marker);
  for (const auto& upstream : upstreams) {
    const auto& name = upstream.alias.empty() ? upstream.registry : upstream.alias;
    if (name.find(':') != std::string::npos) {
      return fail_usage("failed to write the CRI-O configuration for upstream {}: a registry with a port needs a "
                        "name for the mirror's path, such as --upstream registry.test={}",
                        upstream.registry, upstream.registry);
    }
    text += fmt::format("\n[[registry]]\nprefix = \"{}\"\nlocation = \"{}/{}\"\ninsecure = true\n", upstream.registry,
                        listen, name);
    // The longest matching prefix wins (containers-registries.conf(5)).
    for (const auto& reference : exempt) {
      if (reference.registry != upstream.registry) continue;
      text += fmt::format("\n[[registry]]\nprefix = \"{}\"\nlocation = \"{}\"\n", reference.name(), reference.name());
    }
  }
  return text;
}

Result<std::vector<FileChange>> configure_node(const NodeConfigOptions& options) {
  // Everything checked before the first write, so that a refusal leaves the node as it was.
  HWIMG_TRY_ASSIGN(const auto listen, parse_listen_address(options.listen));
  if (listen.second == 0) {
    return fail_usage("invalid --listen \"{}\": the runtime needs the port the mirror listens on", options.listen);
  }
  std::optional<std::string> drop_in;
  if (options.crio_dir) {
    HWIMG_TRY(require_directory(*options.crio_dir));
    HWIMG_TRY_ASSIGN(drop_in, crio_drop_in(options.upstreams, options.listen, options.direct));
  }
  if (options.containerd_dir) {
    HWIMG_TRY(require_directory(*options.containerd_dir));
  }
  std::vector<FileChange> changes;
  if (options.containerd_dir) {
    const auto& root = *options.containerd_dir;
    std::set<std::string> registries;
    for (const auto& upstream : options.upstreams) {
      // containerd 1.6 and 2.x look for ROOT/HOST:PORT/hosts.toml after ROOT/HOST_PORT_/hosts.toml
      // (hostPaths, docs/serve.md#configure-node).
      const auto content = containerd_hosts_toml(upstream, options.listen);
      HWIMG_TRY_ASSIGN(auto change, install(root / upstream.registry / "hosts.toml", content));
      changes.push_back(std::move(change));
      registries.insert(upstream.registry);
    }
    HWIMG_TRY(uninstall_hosts(root, registries, changes));
  }
  if (drop_in) {
    HWIMG_TRY_ASSIGN(auto change, install(*options.crio_dir / crio_drop_in_name, *drop_in));
    changes.push_back(std::move(change));
  }
  return changes;
}

Result<std::vector<FileChange>> remove_node_config(const NodeConfigOptions& options) {
  std::vector<FileChange> changes;
  if (options.containerd_dir) {
    HWIMG_TRY(require_directory(*options.containerd_dir));
    HWIMG_TRY(uninstall_hosts(*options.containerd_dir, {}, changes));
  }
  if (options.crio_dir) {
    const auto path = *options.crio_dir / crio_drop_in_name;
    HWIMG_TRY(require_directory(*options.crio_dir));
    HWIMG_TRY_ASSIGN(auto change, uninstall(path));
    if (change) changes.push_back(std::move(*change));
  }
  return changes;
}

std::string describe(const FileChange& change) {
  const auto path = change.path.string();
  const auto backup = backup_of(change.path).string();
  switch (change.action) {
    case FileAction::written:
      return change.backed_up ? fmt::format("written {} (what was there kept in {})", path, backup)
                              : fmt::format("written {}", path);
    case FileAction::updated: return fmt::format("updated {}", path);
    case FileAction::unchanged: return fmt::format("unchanged {}", path);
    case FileAction::restored: return fmt::format("restored {} from {}", path, backup);
    case FileAction::removed: return fmt::format("removed {}", path);
    case FileAction::left: return fmt::format("left {}: not written by hwimg; {} kept", path, backup);
  }
  return path;
}

}  // namespace hwimg::serve
