#include "hwimg/image/layer_unpacker.hpp"

#include <cerrno>
#include <memory>
#include <set>
#include <thread>

#include <archive.h>
#include <archive_entry.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwimg/image/layer_entry.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::image {
namespace fs = std::filesystem;

namespace {

struct ReadFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct WriteFree {
  void operator()(archive* a) const { archive_write_free(a); }
};
using ArchiveReader = std::unique_ptr<archive, ReadFree>;
using DiskWriter = std::unique_ptr<archive, WriteFree>;

constexpr std::string_view whiteout_prefix = ".wh.";
constexpr std::string_view opaque_marker = ".wh..wh..opq";

std::string archive_message(archive* a) {
  const char* message = archive_error_string(a);
  return message != nullptr ? message : "unknown error";
}

// The name a whiteout `.wh.NAME` removes; the empty name, "." and ".." (".wh.", ".wh..", ".wh...")
// would remove the directory holding it or one above the image root, and are refused.
Result<std::string_view> whiteout_target(std::string_view name, const std::string& raw) {
  const auto target = name.substr(whiteout_prefix.size());
  if (target.empty() || target == "." || target == ".." || target.find('/') != std::string_view::npos) {
    return fail("entry \"{}\" is a whiteout of \"{}\", which names no file of its directory", raw, target);
  }
  return target;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string join_path(const std::string& directory, std::string_view name) {
  return directory.empty() ? std::string(name) : directory + "/" + std::string(name);
}

// Unpacks layers into the working directory of the calling thread (see unpack_layers).
class Unpacker {
public:
  explicit Unpacker(Ownership ownership) : m_ownership(ownership) {}

  Result<void> layer(const LayerFile& file) {
    m_layer_paths.clear();
    ArchiveReader reader(archive_read_new());
    DiskWriter writer(archive_write_disk_new());
    if (!reader || !writer) return fail("out of memory");
    // WARN: a filter that runs an external program instead of the linked library, which still reads.
    if (archive_read_support_filter_gzip(reader.get()) < ARCHIVE_WARN ||
        archive_read_support_filter_zstd(reader.get()) < ARCHIVE_WARN ||
        archive_read_support_format_tar(reader.get()) != ARCHIVE_OK ||
        archive_read_support_format_empty(reader.get()) != ARCHIVE_OK) {
      return fail("failed to set up reading {}: {}", file.path.string(), archive_message(reader.get()));
    }
    int flags = ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME;
    if (m_ownership == Ownership::from_layers) flags |= ARCHIVE_EXTRACT_OWNER;
    if (archive_write_disk_set_options(writer.get(), flags) != ARCHIVE_OK) {
      return fail("failed to set up the unpacking: {}", archive_message(writer.get()));
    }
    if (archive_read_open_filename(reader.get(), file.path.c_str(), 1 << 16) != ARCHIVE_OK) {
      return fail("failed to read {}: {}", file.path.string(), archive_message(reader.get()));
    }
    archive_entry* entry = nullptr;
    while (true) {
      const int r = archive_read_next_header(reader.get(), &entry);
      if (r == ARCHIVE_EOF) break;
      if (r < ARCHIVE_WARN) return fail("failed to read {}: {}", file.path.string(), archive_message(reader.get()));
      HWIMG_TRY(this->entry(reader.get(), writer.get(), entry));
    }
    // Applies the permissions and times of directories, which libarchive defers to the end.
    if (archive_write_close(writer.get()) < ARCHIVE_WARN) {
      return fail("failed to finish unpacking: {}", archive_message(writer.get()));
    }
    return {};
  }

private:
  Result<void> entry(archive* reader, archive* writer, archive_entry* entry) {
    const std::string raw = archive_entry_pathname(entry) != nullptr ? archive_entry_pathname(entry) : "";
    HWIMG_TRY_ASSIGN(const auto path, clean_entry_path(raw));
    if (path.empty()) return {};  // the root itself
    const auto name = std::string_view(path).substr(path.rfind('/') + 1);
    if (name == opaque_marker) return make_opaque(parent_of(path), raw);
    if (name.starts_with(whiteout_prefix)) {
      HWIMG_TRY_ASSIGN(const auto target, whiteout_target(name, raw));
      return remove(join_path(parent_of(path), target), raw);
    }
    const auto type = archive_entry_filetype(entry);
    if (type == AE_IFCHR || type == AE_IFBLK) {
      return fail("entry \"{}\" is a device node, which a builder image may not carry", raw);
    }
    archive_entry_set_pathname(entry, path.c_str());
    if (const char* link = archive_entry_hardlink(entry); link != nullptr) {
      const auto target = clean_entry_path(link);
      if (!target) return fail("entry \"{}\" is a hard link to \"{}\", outside the image root", raw, link);
      HWIMG_TRY(check_directory(parent_of(*target), raw));
      archive_entry_set_hardlink(entry, target->c_str());
    }
    // No setuid, setgid or sticky bit reaches the cache, where a setuid-root file of an image would
    // be a way to root for whoever can reach it (docs/recipe.md#build-image).
    auto perm = archive_entry_perm(entry) & 0777;
    if (type == AE_IFDIR && m_ownership == Ownership::unpacking_user) perm |= 0700;
    archive_entry_set_perm(entry, perm);
    struct stat existing {};
    if (type != AE_IFDIR && ::lstat(path.c_str(), &existing) == 0 && S_ISDIR(existing.st_mode)) {
      HWIMG_TRY(remove(path, raw));  // a lower layer's directory, which libarchive only removes when empty
    }
    if (archive_write_header(writer, entry) < ARCHIVE_WARN) {
      return fail("entry \"{}\": {}", raw, archive_message(writer));
    }
    const void* block = nullptr;
    std::size_t size = 0;
    la_int64_t offset = 0;
    while (true) {
      const int r = archive_read_data_block(reader, &block, &size, &offset);
      if (r == ARCHIVE_EOF) break;
      if (r < ARCHIVE_WARN) return fail("entry \"{}\": {}", raw, archive_message(reader));
      if (archive_write_data_block(writer, block, size, offset) < ARCHIVE_WARN) {
        return fail("entry \"{}\": {}", raw, archive_message(writer));
      }
    }
    if (archive_write_finish_entry(writer) < ARCHIVE_WARN) {
      return fail("entry \"{}\": {}", raw, archive_message(writer));
    }
    m_layer_paths.insert(path);
    return {};
  }

  // False when `directory` does not exist (nothing to remove there); an error when a component is a
  // symlink, which a removal must not follow out of the root.
  static Result<bool> check_directory(const std::string& directory, const std::string& raw) {
    std::string prefix;
    for (const auto& part : util::split(directory, '/')) {
      if (part.empty()) continue;
      prefix = join_path(prefix, part);
      struct stat info {};
      if (::lstat(prefix.c_str(), &info) != 0) return false;
      if (S_ISLNK(info.st_mode)) return fail("entry \"{}\" goes through the symlink \"{}\"", raw, prefix);
      if (!S_ISDIR(info.st_mode)) return false;
    }
    return true;
  }

  Result<void> remove(const std::string& path, const std::string& raw) {
    HWIMG_TRY_ASSIGN(const bool reachable, check_directory(parent_of(path), raw));
    if (!reachable) return {};
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) return fail("entry \"{}\": failed to remove {}: {}", raw, path, ec.message());
    return {};
  }

  bool written_at_or_below(const std::string& path) const {
    if (m_layer_paths.contains(path)) return true;
    const auto below = m_layer_paths.lower_bound(path + "/");
    return below != m_layer_paths.end() && below->starts_with(path + "/");
  }

  // Removes what lower layers put under `directory`, keeping what this layer wrote there.
  Result<void> make_opaque(const std::string& directory, const std::string& raw) {
    HWIMG_TRY_ASSIGN(const bool reachable, check_directory(directory, raw));
    if (!reachable) return {};
    std::error_code ec;
    std::vector<std::string> children;
    for (fs::directory_iterator it(directory.empty() ? fs::path(".") : fs::path(directory), ec), end;
         !ec && it != end; it.increment(ec)) {
      children.push_back(join_path(directory, it->path().filename().string()));
    }
    if (ec) return fail("entry \"{}\": failed to list {}: {}", raw, directory, ec.message());
    for (const auto& child : children) {
      if (!written_at_or_below(child)) {
        HWIMG_TRY(remove(child, raw));
      } else if (fs::is_directory(fs::symlink_status(child, ec))) {
        HWIMG_TRY(make_opaque(child, raw));
      }
    }
    return {};
  }

  Ownership m_ownership;
  std::set<std::string> m_layer_paths;  // written by the layer being unpacked
};

}  // namespace

Result<void> unpack_layers(const std::vector<LayerFile>& layers, const fs::path& directory, Ownership ownership) {
  // libarchive extracts relative to the working directory and reads the umask by changing it; a
  // thread of its own with unshared file-system attributes keeps both from the other threads.
  Result<void> result;
  std::thread worker([&] {
    if (::unshare(CLONE_FS) != 0) {
      result = fail("failed to unpack into {}: unshare: {}", directory.string(), util::errno_text(errno));
      return;
    }
    if (::chdir(directory.c_str()) != 0) {
      result = fail("failed to unpack into {}: {}", directory.string(), util::errno_text(errno));
      return;
    }
    Unpacker unpacker(ownership);
    for (const auto& layer : layers) {
      result = with_context(unpacker.layer(layer), "failed to unpack layer " + layer.name);
      if (!result) return;
    }
  });
  worker.join();
  return result;
}

}  // namespace hwimg::image

// libarchive's disk writer calls libacl only for ARCHIVE_EXTRACT_ACL, which hwimg never asks for;
// these stand in for libacl so the static link needs no libacl.so loaded at every start.
extern "C" {
namespace {
int no_acl() {
  errno = ENOTSUP;
  return -1;
}
}  // namespace
int acl_add_perm(void*, unsigned) { return no_acl(); }
int acl_clear_perms(void*) { return no_acl(); }
int acl_create_entry(void**, void**) { return no_acl(); }
int acl_free(void*) { return 0; }
int acl_get_permset(void*, void**) { return no_acl(); }
void* acl_init(int) {
  errno = ENOTSUP;
  return nullptr;
}
int acl_set_fd(int, void*) { return no_acl(); }
int acl_set_file(const char*, int, void*) { return no_acl(); }
int acl_set_qualifier(void*, const void*) { return no_acl(); }
int acl_set_tag_type(void*, int) { return no_acl(); }
}
