#include "hwimg/image/layer_files.hpp"

#include <algorithm>
#include <memory>

#include <archive.h>
#include <archive_entry.h>

#include "hwimg/image/layer_entry.hpp"

namespace hwimg::image {
namespace {

constexpr std::size_t layer_file_head_size = 20;

struct LayerFilesReadFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

std::string layer_files_message(archive* a) {
  const char* message = archive_error_string(a);
  return message != nullptr ? message : "unknown error";
}

// Reads up to `size` more bytes of the current entry into `out`; false at its end.
Result<bool> read_entry_bytes(archive* reader, std::string& out, std::size_t size, std::string_view path) {
  const auto start = out.size();
  out.resize(start + size);
  std::size_t filled = 0;
  while (filled < size) {
    const auto n = archive_read_data(reader, out.data() + start + filled, size - filled);
    if (n < 0) return fail("failed to read \"{}\": {}", path, layer_files_message(reader));
    if (n == 0) break;
    filled += static_cast<std::size_t>(n);
  }
  out.resize(start + filled);
  return filled == size;
}

}  // namespace

Result<void> read_layer_files(const std::filesystem::path& blob, std::string_view name, const LayerFileFilter& wanted,
                              const LayerFileVisitor& visit, const LayerXattrVisitor& xattrs) {
  const auto context = fmt::format("failed to read layer {}", name);
  std::unique_ptr<archive, LayerFilesReadFree> reader(archive_read_new());
  if (!reader) return fail("{}: out of memory", context);
  // WARN: a filter that runs an external program instead of the linked library, which still reads.
  if (archive_read_support_filter_gzip(reader.get()) < ARCHIVE_WARN ||
      archive_read_support_filter_zstd(reader.get()) < ARCHIVE_WARN ||
      archive_read_support_format_tar(reader.get()) != ARCHIVE_OK ||
      archive_read_support_format_empty(reader.get()) != ARCHIVE_OK) {
    return fail("{}: {}", context, layer_files_message(reader.get()));
  }
  if (archive_read_open_filename(reader.get(), blob.c_str(), 1 << 16) != ARCHIVE_OK) {
    return fail("{}: {}", context, layer_files_message(reader.get()));
  }
  archive_entry* entry = nullptr;
  std::string bytes;
  while (true) {
    const int r = archive_read_next_header(reader.get(), &entry);
    if (r == ARCHIVE_EOF) return {};
    if (r < ARCHIVE_WARN) return fail("{}: {}", context, layer_files_message(reader.get()));
    const bool regular = archive_entry_filetype(entry) == AE_IFREG && archive_entry_hardlink(entry) == nullptr;
    const bool has_xattrs = xattrs && archive_entry_xattr_reset(entry) > 0;
    if (!regular && !has_xattrs) continue;
    const char* raw = archive_entry_pathname(entry);
    HWIMG_TRY_ASSIGN(const auto path, with_context(clean_entry_path(raw != nullptr ? raw : ""), context));
    if (has_xattrs) {
      const char* xattr = nullptr;
      const void* value = nullptr;
      std::size_t size = 0;
      while (archive_entry_xattr_next(entry, &xattr, &value, &size) == ARCHIVE_OK) {
        if (xattr != nullptr) xattrs(path, xattr);
      }
    }
    if (!regular) continue;
    bytes.clear();
    HWIMG_TRY_ASSIGN(const bool more, with_context(read_entry_bytes(reader.get(), bytes, layer_file_head_size, path),
                                                   context));
    if (!wanted(path, std::as_bytes(std::span(bytes.data(), bytes.size())))) continue;
    if (more) {
      const auto size = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : 0;
      if (size > static_cast<la_int64_t>(bytes.size())) bytes.reserve(static_cast<std::size_t>(size));
      while (true) {
        HWIMG_TRY_ASSIGN(const bool again, with_context(read_entry_bytes(reader.get(), bytes, 1 << 20, path), context));
        if (!again) break;
      }
    }
    HWIMG_TRY(visit(path, bytes));
  }
}

}  // namespace hwimg::image
