#include "hwimg/build/container_mounts.hpp"

#include <algorithm>
#include <cerrno>

#include <sys/stat.h>

#include "hwimg/util/files.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

namespace {

bool is_strictly_under(const fs::path& path, const fs::path& directory) {
  const auto relative = path.lexically_relative(directory);
  return !relative.empty() && relative != "." && *relative.begin() != "..";
}

class MountPlanner {
public:
  MountPlanner(fs::path rootfs, std::vector<fs::path> targets)
      : m_rootfs(std::move(rootfs)), m_targets(std::move(targets)) {}

  // Adds the entries of the image's directory `relative` ("" for the root).
  Result<void> expand(const fs::path& relative) {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(m_rootfs / relative, ec), end; !ec && it != end; it.increment(ec)) {
      names.push_back(it->path().filename().string());
    }
    if (ec) return fail("failed to list {}: {}", (m_rootfs / relative).string(), ec.message());
    std::ranges::sort(names);
    for (const auto& name : names) {
      // The container's own /proc, /dev and /tmp replace the image's.
      if (relative.empty() && (name == "proc" || name == "dev" || name == "tmp")) continue;
      const auto entry = relative / name;
      const auto destination = "/" / entry;
      const auto host = m_rootfs / entry;
      if (std::ranges::find(m_targets, destination) != m_targets.end()) continue;  // bound over
      struct stat info {};
      if (::lstat(host.c_str(), &info) != 0) {
        return fail("failed to read {}: {}", host.string(), util::errno_text(errno));
      }
      const auto inside = std::ranges::find_if(m_targets, [&](const fs::path& t) { return is_strictly_under(t, destination); });
      if (inside != m_targets.end()) {
        if (!S_ISDIR(info.st_mode)) {
          return fail("the host directory {} cannot be mounted in the builder image: {} is a {} there",
                      inside->string(), destination.string(), S_ISLNK(info.st_mode) ? "symlink" : "file");
        }
        m_mounts.push_back({MountKind::directory, destination, {}});
        HWIMG_TRY(expand(entry));
      } else if (S_ISLNK(info.st_mode)) {
        // Bound, a symlink would resolve on the host; recreated, it resolves inside the container.
        const auto target = fs::read_symlink(host, ec);
        if (ec) return fail("failed to read the symlink {}: {}", host.string(), ec.message());
        m_mounts.push_back({MountKind::symlink, destination, target});
      } else if (S_ISDIR(info.st_mode) || S_ISREG(info.st_mode)) {
        m_mounts.push_back({MountKind::read_only_bind, destination, host});
      }
      // Sockets and FIFOs at this level are left out: nothing can be bound over them.
    }
    return {};
  }

  std::vector<ContainerMount> finish() && {
    m_mounts.push_back({MountKind::proc, "/proc", {}});
    m_mounts.push_back({MountKind::dev, "/dev", {}});
    m_mounts.push_back({MountKind::tmpfs, "/tmp", {}});
    for (const auto& target : m_targets) m_mounts.push_back({MountKind::read_write_bind, target, target});
    return std::move(m_mounts);
  }

private:
  fs::path m_rootfs;
  std::vector<fs::path> m_targets;  // sorted, none inside another
  std::vector<ContainerMount> m_mounts;
};

}  // namespace

Result<std::vector<ContainerMount>> plan_container_mounts(const fs::path& rootfs,
                                                          const std::vector<fs::path>& host_directories) {
  std::vector<fs::path> targets;
  for (const auto& directory : host_directories) {
    const auto path = fs::absolute(directory).lexically_normal();
    auto clean = path.has_filename() ? path : path.parent_path();
    if (clean == "/" || clean == "/proc" || clean == "/dev" || is_strictly_under(clean, "/proc") ||
        is_strictly_under(clean, "/dev")) {
      return fail("the host directory {} cannot be mounted in a builder image: it is the container's own",
                  directory.string());
    }
    targets.push_back(std::move(clean));
  }
  std::ranges::sort(targets);
  // One inside another is seen through the outer bind already.
  std::vector<fs::path> outermost;
  for (const auto& target : targets) {
    const bool covered = std::ranges::any_of(outermost, [&](const fs::path& outer) {
      return outer == target || is_strictly_under(target, outer);
    });
    if (!covered) outermost.push_back(target);
  }
  MountPlanner planner(rootfs, std::move(outermost));
  HWIMG_TRY(planner.expand({}));
  return std::move(planner).finish();
}

}  // namespace hwimg::build
