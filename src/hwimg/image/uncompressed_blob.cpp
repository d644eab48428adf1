#include "hwimg/image/uncompressed_blob.hpp"

#include <memory>
#include <string>

#include <archive.h>

namespace hwimg::image {
namespace {

struct UncompressedReadFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

std::string uncompressed_blob_message(archive* a) {
  const char* message = archive_error_string(a);
  return message != nullptr ? message : "unknown error";
}

}  // namespace

Result<void> read_uncompressed_blob(const std::filesystem::path& blob, std::string_view name,
                                    const std::function<Result<void>(std::string_view)>& sink) {
  const auto context = fmt::format("failed to read layer {}", name);
  std::unique_ptr<archive, UncompressedReadFree> reader(archive_read_new());
  if (!reader) return fail("{}: out of memory", context);
  // The "raw" format: the filters' output as one entry, the tar itself, not its files.
  if (archive_read_support_filter_gzip(reader.get()) < ARCHIVE_WARN ||
      archive_read_support_filter_zstd(reader.get()) < ARCHIVE_WARN ||
      archive_read_support_format_raw(reader.get()) != ARCHIVE_OK ||
      archive_read_support_format_empty(reader.get()) != ARCHIVE_OK) {
    return fail("{}: {}", context, uncompressed_blob_message(reader.get()));
  }
  if (archive_read_open_filename(reader.get(), blob.c_str(), 1 << 16) != ARCHIVE_OK) {
    return fail("{}: {}", context, uncompressed_blob_message(reader.get()));
  }
  archive_entry* entry = nullptr;
  const int header = archive_read_next_header(reader.get(), &entry);
  if (header == ARCHIVE_EOF) return {};
  if (header < ARCHIVE_WARN) return fail("{}: {}", context, uncompressed_blob_message(reader.get()));
  std::string buffer(1 << 20, '\0');
  while (true) {
    const auto n = archive_read_data(reader.get(), buffer.data(), buffer.size());
    if (n < 0) return fail("{}: {}", context, uncompressed_blob_message(reader.get()));
    if (n == 0) return {};
    HWIMG_TRY(sink(std::string_view(buffer.data(), static_cast<std::size_t>(n))));
  }
}

}  // namespace hwimg::image
