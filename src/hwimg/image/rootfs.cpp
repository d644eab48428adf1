#include "hwimg/image/rootfs.hpp"

#include <cerrno>

#include <sys/stat.h>
#include <unistd.h>

#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::image {
namespace fs = std::filesystem;

namespace {

// The marker's content: the layers' digests, one a line, lowest first.
std::string layers_text(const std::vector<oci::Digest>& layer_digests) {
  std::string text;
  for (const auto& digest : layer_digests) text += digest.str() + "\n";
  return text;
}

bool is_complete(const fs::path& target, const fs::path& marker, const std::string& expected) {
  std::error_code ec;
  if (!fs::is_directory(target, ec)) return false;
  const auto text = util::read_regular_file(marker, expected.size());
  return text && *text == expected;
}

// Takes a rootfs that is not complete out of the way: its marker first, so a crash in between
// leaves one without a marker, then the directory renamed to a staging name and removed (a crash
// leaves that name to the next one's clean-up).
Result<void> discard(const fs::path& target, const fs::path& marker, const oci::Digest& manifest) {
  std::error_code ec;
  if (::unlink(marker.c_str()) != 0 && errno != ENOENT) {
    return fail("failed to remove {}: {}", marker.string(), util::errno_text(errno));
  }
  if (!fs::exists(fs::symlink_status(target, ec))) return {};
  const auto doomed = target.parent_path() / fmt::format(".{}.tmp-{}-discarded", manifest.hex(), ::getpid());
  if (::rename(target.c_str(), doomed.c_str()) != 0) {
    return fail("failed to remove the incomplete root filesystem {}: {}", target.string(), util::errno_text(errno));
  }
  fs::remove_all(doomed, ec);
  if (ec) return fail("failed to remove the incomplete root filesystem {}: {}", doomed.string(), ec.message());
  return {};
}

}  // namespace

Result<fs::path> unpacked_rootfs(const BlobCache& cache, const oci::Digest& manifest,
                                 const std::vector<oci::Digest>& layer_digests, const LayerFiles& layers,
                                 Ownership ownership) {
  const auto directory = cache.root() / "rootfs";
  const auto target = directory / manifest.hex();
  const auto marker = directory / (manifest.hex() + ".layers");
  const auto expected = layers_text(layer_digests);
  // Pinned before it is looked at, so that no prune removes it while a build step runs in it.
  HWIMG_TRY(cache.lease().pin(cache_entry::rootfs(manifest)));
  if (is_complete(target, marker, expected)) {
    mark_used(marker);
    return target;
  }
  HWIMG_TRY(with_context(util::make_private_directory(directory), "failed to open the cache " + cache.root().string()));
  HWIMG_TRY_ASSIGN(const auto lock, util::FileLock::acquire(cache.root() / "locks" / ("rootfs-" + manifest.hex())));
  if (is_complete(target, marker, expected)) return target;  // another build made it while this one waited
  util::remove_orphaned_temporaries(directory, ".", ".tmp-");
  HWIMG_TRY(discard(target, marker, manifest));
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
  HWIMG_TRY(with_context(util::write_file_atomic(marker, expected, 0600),
                         "failed to store the root filesystem " + target.string() + " in the cache"));
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
