#include "hwimg/image/blob_sink.hpp"

#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

#include "hwimg/util/files.hpp"

namespace hwimg::image {

Result<BlobSink> BlobSink::create(const std::filesystem::path& path, const oci::Descriptor& expected) {
  util::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) return fail("failed to create {}: {}", path.string(), util::errno_text(errno));
  return BlobSink(path, std::move(fd), expected);
}

BlobSink::BlobSink(std::filesystem::path path, util::UniqueFd fd, oci::Descriptor expected)
    : m_path(std::move(path)), m_fd(std::move(fd)), m_expected(std::move(expected)) {}

BlobSink::BlobSink(BlobSink&& other) noexcept
    : m_path(std::move(other.m_path)), m_fd(std::move(other.m_fd)), m_expected(std::move(other.m_expected)),
      m_hash(std::move(other.m_hash)), m_size(other.m_size), m_done(other.m_done) {
  other.m_done = true;
}

BlobSink::~BlobSink() {
  if (!m_done) ::unlink(m_path.c_str());
}

Result<void> BlobSink::write(std::string_view data) {
  m_hash.update(data);
  m_size += data.size();
  if (m_expected.size >= 0 && m_size > static_cast<std::uint64_t>(m_expected.size)) {
    return fail("blob {} is larger than its descriptor's {} bytes", m_expected.digest.str(), m_expected.size);
  }
  while (!data.empty()) {
    const auto n = ::write(m_fd.get(), data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("failed to write {}: {}", m_path.string(), util::errno_text(errno));
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Result<void> BlobSink::finish() {
  if (const auto actual = m_hash.finish(); actual != m_expected.digest) {
    return fail("blob {} does not match its digest (content hashes to {})", m_expected.digest.str(), actual.str());
  }
  if (m_size != static_cast<std::uint64_t>(m_expected.size)) {
    return fail("blob {} is {} bytes, its descriptor says {}", m_expected.digest.str(), m_size, m_expected.size);
  }
  if (::fsync(m_fd.get()) != 0) return fail("failed to sync {}: {}", m_path.string(), util::errno_text(errno));
  m_done = true;
  return {};
}

}  // namespace hwimg::image
