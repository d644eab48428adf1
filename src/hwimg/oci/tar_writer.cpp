#include "hwimg/oci/tar_writer.hpp"

#include <cerrno>
#include <string>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwimg/util/fd.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::oci {
namespace {

struct TarArchiveFree {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct TarEntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

}  // namespace

struct TarWriter::Impl {
  std::filesystem::path path;
  util::UniqueFd fd;
  std::unique_ptr<archive, TarArchiveFree> tar;
  std::unique_ptr<archive_entry, TarEntryFree> entry;
  std::int64_t mtime = 0;

  Result<void> check(int status, std::string_view what) const {
    if (status >= ARCHIVE_OK) return {};
    const char* message = archive_error_string(tar.get());
    return fail("failed to write {} into {}: {}", what, path.string(),
                message != nullptr ? message : "libarchive error");
  }

  Result<void> header(std::string_view name, mode_t type, std::int64_t size) {
    archive_entry_clear(entry.get());
    archive_entry_set_pathname(entry.get(), std::string(name).c_str());
    archive_entry_set_filetype(entry.get(), type);
    archive_entry_set_perm(entry.get(), type == AE_IFDIR ? 0755 : 0644);
    archive_entry_set_uid(entry.get(), 0);
    archive_entry_set_gid(entry.get(), 0);
    archive_entry_set_mtime(entry.get(), mtime, 0);
    archive_entry_set_size(entry.get(), size);
    return check(archive_write_header(tar.get(), entry.get()), name);
  }

  Result<void> data(std::string_view name, std::string_view bytes) {
    if (bytes.empty()) return {};
    const auto written = archive_write_data(tar.get(), bytes.data(), bytes.size());
    if (written < 0 || static_cast<std::size_t>(written) != bytes.size()) return check(ARCHIVE_FATAL, name);
    return {};
  }
};

TarWriter::TarWriter(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
TarWriter::TarWriter(TarWriter&&) noexcept = default;
TarWriter& TarWriter::operator=(TarWriter&&) noexcept = default;
TarWriter::~TarWriter() = default;

Result<TarWriter> TarWriter::create(const std::filesystem::path& path, std::int64_t mtime) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->mtime = mtime;
  impl->fd = util::UniqueFd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!impl->fd.valid()) return fail("failed to create {}: {}", path.string(), util::errno_text(errno));
  impl->tar.reset(archive_write_new());
  impl->entry.reset(archive_entry_new());
  if (!impl->tar || !impl->entry) return fail("failed to create a tar writer: out of memory");
  HWIMG_TRY(impl->check(archive_write_set_format_pax_restricted(impl->tar.get()), "(format)"));
  HWIMG_TRY(impl->check(archive_write_set_bytes_in_last_block(impl->tar.get(), 1), "(format)"));
  HWIMG_TRY(impl->check(archive_write_open_fd(impl->tar.get(), impl->fd.get()), "(open)"));
  return TarWriter(std::move(impl));
}

Result<void> TarWriter::add_directory(std::string_view name) {
  return m_impl->header(name, AE_IFDIR, 0);
}

Result<void> TarWriter::add_bytes(std::string_view name, std::string_view data) {
  HWIMG_TRY(m_impl->header(name, AE_IFREG, static_cast<std::int64_t>(data.size())));
  return m_impl->data(name, data);
}

Result<void> TarWriter::add_file(std::string_view name, const std::filesystem::path& source) {
  const util::UniqueFd fd(::open(source.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd.valid() || ::fstat(fd.get(), &info) != 0) {
    return fail("failed to read {}: {}", source.string(), util::errno_text(errno));
  }
  HWIMG_TRY(m_impl->header(name, AE_IFREG, info.st_size));
  std::string buffer(1 << 20, '\0');
  std::int64_t total = 0;
  while (true) {
    const auto n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("failed to read {}: {}", source.string(), util::errno_text(errno));
    if (n == 0) break;
    total += n;
    if (total > info.st_size) break;
    HWIMG_TRY(m_impl->data(name, std::string_view(buffer.data(), static_cast<std::size_t>(n))));
  }
  if (total != info.st_size) return fail("failed to pack {}: it changed size while being packed", source.string());
  return {};
}

Result<void> TarWriter::finish() {
  HWIMG_TRY(m_impl->check(archive_write_close(m_impl->tar.get()), "(end of archive)"));
  if (::fsync(m_impl->fd.get()) != 0) {
    return fail("failed to write {}: {}", m_impl->path.string(), util::errno_text(errno));
  }
  return {};
}

}  // namespace hwimg::oci
