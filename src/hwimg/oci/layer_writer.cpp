#include "hwimg/oci/layer_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::oci {
namespace fs = std::filesystem;

namespace {

struct Entry {
  std::string name;      // path in the archive, no leading '/', no trailing '/'
  fs::path source;       // empty for directories synthesised for parents of a destination
  struct stat info {};
};

struct ArchiveFree {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

struct Sink {
  LayerBlobWriter* writer;
  std::optional<Error> error;
};

la_ssize_t write_callback(archive*, void* context, const void* buffer, size_t length) {
  auto* sink = static_cast<Sink*>(context);
  if (auto r = sink->writer->write(std::string_view(static_cast<const char*>(buffer), length)); !r) {
    sink->error = r.error();
    return -1;
  }
  return static_cast<la_ssize_t>(length);
}

Result<void> collect(const fs::path& path, const std::string& name, std::vector<Entry>& entries) {
  Entry entry{name, path, {}};
  if (::lstat(path.c_str(), &entry.info) != 0) {
    return fail("failed to read {}: {}", path.string(), util::errno_text(errno));
  }
  const auto type = entry.info.st_mode & S_IFMT;
  if (type == S_IFSOCK) {
    return {};  // sockets cannot live in a layer (the image spec lists no socket entry)
  }
  entries.push_back(entry);
  if (type != S_IFDIR) {
    return {};
  }
  std::error_code ec;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    const auto child = it->path();
    // Under the image root (name ""), children are "bin", not "/bin": tar names are relative.
    HWIMG_TRY(collect(child, name.empty() ? child.filename().string() : name + "/" + child.filename().string(),
                      entries));
  }
  if (ec) {
    return fail("failed to list {}: {}", path.string(), ec.message());
  }
  return {};
}

Result<void> check(archive* a, int status, const std::string& what) {
  if (status < ARCHIVE_OK) {
    const char* message = archive_error_string(a);
    return fail("failed to write layer entry {}: {}", what, message != nullptr ? message : "libarchive error");
  }
  return {};
}

Result<void> write_content(archive* a, const Entry& entry) {
  util::UniqueFd fd(::open(entry.source.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) {
    return fail("failed to read {}: {}", entry.source.string(), util::errno_text(errno));
  }
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  thread_local std::string buffer(1 << 20, '\0');
  std::int64_t total = 0;
  while (true) {
    const auto n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("failed to read {}: {}", entry.source.string(), util::errno_text(errno));
    }
    if (n == 0) break;
    total += n;
    if (total > entry.info.st_size) break;
    if (archive_write_data(a, buffer.data(), static_cast<std::size_t>(n)) < 0) {
      return check(a, ARCHIVE_FATAL, entry.name);
    }
  }
  if (total != entry.info.st_size) {
    return fail("failed to pack {}: the file changed size while being packed", entry.source.string());
  }
  return {};
}

}  // namespace

Result<std::string> normalize_image_path(std::string_view path) {
  std::vector<std::string> parts;
  for (const auto& part : util::split(path, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (parts.empty()) {
        return fail("\"{}\" escapes the image root", path);
      }
      parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  return util::join(parts, "/");
}

Result<WrittenLayer> write_layer(const Layout& layout, const std::vector<LayerSource>& sources,
                                 const LayerOptions& options) {
  std::vector<Entry> entries;
  std::set<std::string> names;
  for (const auto& source : sources) {
    HWIMG_TRY_ASSIGN(const auto destination,
                     with_context(normalize_image_path(source.to), "failed to place " + source.from.string()));
    // Parents of the destination exist in the image as plain 0755 directories.
    const auto parts = util::split(destination, '/');
    std::string parent;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      parent += (i == 0 ? "" : "/") + parts[i];
      if (names.insert(parent).second) {
        Entry dir{parent, {}, {}};
        dir.info.st_mode = S_IFDIR | 0755;
        entries.push_back(dir);
      }
    }
    std::vector<Entry> found;
    HWIMG_TRY(collect(source.from, destination, found));
    for (auto& entry : found) {
      if (entry.name.empty()) continue;  // the image root itself keeps the runtime's attributes
      if (!names.insert(entry.name).second) {
        return fail("failed to pack {}: \"/{}\" is written twice in one layer", source.from.string(), entry.name);
      }
      entries.push_back(std::move(entry));
    }
  }
  // Byte-wise order of names without trailing '/' puts every parent before its children.
  std::ranges::sort(entries, {}, &Entry::name);

  HWIMG_TRY_ASSIGN(auto writer, LayerBlobWriter::create(layout, options.compression));
  Sink sink{&writer, std::nullopt};
  std::unique_ptr<archive, ArchiveFree> a(archive_write_new());
  if (!a) return fail("failed to create a tar writer: out of memory");
  HWIMG_TRY(check(a.get(), archive_write_set_format_pax_restricted(a.get()), "(format)"));
  HWIMG_TRY(check(a.get(), archive_write_set_format_option(a.get(), "pax", "xattrheader", "SCHILY"), "(format)"));
  HWIMG_TRY(check(a.get(), archive_write_set_bytes_per_block(a.get(), 64 * 1024), "(format)"));
  HWIMG_TRY(check(a.get(), archive_write_set_bytes_in_last_block(a.get(), 1), "(format)"));
  HWIMG_TRY(check(a.get(), archive_write_open2(a.get(), &sink, nullptr, write_callback, nullptr, nullptr), "(open)"));

  std::map<std::pair<dev_t, ino_t>, std::string> first_link;
  std::unique_ptr<archive_entry, EntryFree> e(archive_entry_new());
  for (const auto& entry : entries) {
    archive_entry_clear(e.get());
    const auto type = entry.info.st_mode & S_IFMT;
    archive_entry_set_pathname(e.get(), type == S_IFDIR ? (entry.name + "/").c_str() : entry.name.c_str());
    archive_entry_set_mode(e.get(), type | (entry.info.st_mode & 07777));
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    archive_entry_set_mtime(e.get(), options.mtime, 0);
    bool has_content = false;
    if (type == S_IFREG) {
      const auto key = std::make_pair(entry.info.st_dev, entry.info.st_ino);
      if (entry.info.st_nlink > 1) {
        if (const auto it = first_link.find(key); it != first_link.end()) {
          archive_entry_set_hardlink(e.get(), it->second.c_str());
          archive_entry_set_size(e.get(), 0);
        } else {
          first_link.emplace(key, entry.name);
        }
      }
      if (archive_entry_hardlink(e.get()) == nullptr) {
        archive_entry_set_size(e.get(), entry.info.st_size);
        has_content = true;
        char capability[256];
        const auto length = ::lgetxattr(entry.source.c_str(), "security.capability", capability, sizeof capability);
        if (length > 0) {
          archive_entry_xattr_add_entry(e.get(), "security.capability", capability, static_cast<std::size_t>(length));
        }
      }
    } else if (type == S_IFLNK) {
      std::error_code ec;
      const auto target = fs::read_symlink(entry.source, ec);
      if (ec) return fail("failed to read symlink {}: {}", entry.source.string(), ec.message());
      archive_entry_set_symlink(e.get(), target.c_str());
    } else if (type == S_IFCHR || type == S_IFBLK) {
      archive_entry_set_rdev(e.get(), entry.info.st_rdev);
    }
    if (auto r = check(a.get(), archive_write_header(a.get(), e.get()), entry.name); !r) {
      return std::unexpected(sink.error ? *sink.error : r.error());
    }
    if (has_content) {
      if (auto r = write_content(a.get(), entry); !r) {
        return std::unexpected(sink.error ? *sink.error : r.error());
      }
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return std::unexpected(sink.error ? *sink.error : check(a.get(), ARCHIVE_FATAL, "(end of archive)").error());
  }
  return writer.finish();
}

}  // namespace hwimg::oci
