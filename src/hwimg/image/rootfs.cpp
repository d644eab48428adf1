#include "hwimg/image/rootfs.hpp"

#include <cerrno>

#include <sys/stat.h>
#include <unistd.h>

#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::image {
namespace fs = std::filesystem;

Result<fs::path> unpacked_rootfs(const BlobCache& cache, const oci::Digest& manifest, const LayerFiles& layers,
                                 Ownership ownership) {
  const auto directory = cache.root() / "rootfs";
  const auto target = directory / manifest.hex();
  std::error_code ec;
  if (fs::is_directory(target, ec)) return target;  // renamed in whole, so complete
  HWIMG_TRY(with_context(util::make_directories(directory), "failed to open the cache " + cache.root().string()));
  HWIMG_TRY_ASSIGN(const auto lock, util::FileLock::acquire(cache.root() / "locks" / ("rootfs-" + manifest.hex())));
  if (fs::is_directory(target, ec)) return target;  // another build made it while this one waited
  util::remove_orphaned_temporaries(directory, ".", ".tmp-");
  HWIMG_TRY_ASSIGN(const auto staging,
                   util::TempDir::create(directory, fmt::format(".{}.tmp-{}-", manifest.hex(), ::getpid())));
  if (::chmod(staging.path().c_str(), 0755) != 0) {
    return fail("failed to set the mode of {}: {}", staging.path().string(), util::errno_text(errno));
  }
  HWIMG_TRY_ASSIGN(const auto files, layers());
  HWIMG_TRY(unpack_layers(files, staging.path(), ownership));
  if (::rename(staging.path().c_str(), target.c_str()) != 0) {
    return fail("failed to store the root filesystem {} in the cache: {}", target.string(), util::errno_text(errno));
  }
  HWIMG_TRY(util::fsync_directory(directory));
  return target;
}

bool exists_in_rootfs(const fs::path& root, std::string_view path) {
  std::vector<std::string> pending;  // components still to walk, the next one last
  const auto push = [&](std::string_view text) {
    auto parts = util::split(text, '/');
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.push_back(*it);
  };
  push(path);
  std::vector<std::string> walked;
  int links = 0;
  while (!pending.empty()) {
    const auto part = std::move(pending.back());
    pending.pop_back();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!walked.empty()) walked.pop_back();
      continue;
    }
    walked.push_back(part);
    auto host = root;
    for (const auto& name : walked) host /= name;
    struct stat info {};
    if (::lstat(host.c_str(), &info) != 0) return false;
    if (!S_ISLNK(info.st_mode)) continue;
    std::error_code ec;
    const auto target = fs::read_symlink(host, ec).string();
    if (ec || ++links > 40) return false;
    walked.pop_back();
    if (target.starts_with('/')) walked.clear();  // absolute links resolve inside the image
    push(target);
  }
  return true;
}

}  // namespace hwimg::image
