#include "hwimg/commands/verify_sources.hpp"

#include "hwimg/commands/environment.hpp"
#include "hwimg/oci/digest.hpp"

namespace hwimg::commands {

VerifySources::VerifySources(image::ImageReader& reader, util::Output& output)
    : m_reader(reader), m_output(output), m_cache(cache_root()),
      m_options{[this](const oci::Descriptor& layer) { return blob(layer); }, &m_cache, &output} {}

Result<std::filesystem::path> VerifySources::blob(const oci::Descriptor& layer) {
  if (auto local = m_reader.local_blob(layer.digest)) {
    // Needs are kept under the digest, so the content must be the digest's.
    HWIMG_TRY_ASSIGN(const auto found, oci::digest_file(local->string()));
    if (found.digest != layer.digest) {
      return fail("failed to read layer {}: the blob's content has digest {}", layer.digest.str(), found.digest.str());
    }
    return *local;
  }
  if (!m_blobs) {
    HWIMG_TRY_ASSIGN(m_blobs, image::BlobCache::open(cache_root(), m_output));
  }
  return m_blobs->get(m_reader, layer);
}

}  // namespace hwimg::commands
