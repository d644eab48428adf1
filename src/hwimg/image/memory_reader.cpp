#include "hwimg/image/memory_reader.hpp"

#include <algorithm>

#include "hwimg/image/blob_sink.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"

namespace hwimg::image {

oci::Descriptor MemoryReader::add(std::string bytes, std::string_view media_type) {
  const auto digest = oci::Digest::sha256_of(bytes);
  oci::Descriptor descriptor{std::string(media_type), digest, static_cast<std::int64_t>(bytes.size()), {}, {}};
  m_blobs[digest] = std::move(bytes);
  m_types[digest] = std::string(media_type);
  return descriptor;
}

Result<oci::Descriptor> MemoryReader::resolve(std::string_view tag_or_digest) {
  if (const auto tagged = m_tags.find(std::string(tag_or_digest)); tagged != m_tags.end()) return tagged->second;
  for (const auto& [digest, bytes] : m_blobs) {
    if (digest.str() == tag_or_digest) {
      return oci::Descriptor{m_types[digest], digest, static_cast<std::int64_t>(bytes.size()), {}, {}};
    }
  }
  return fail("failed to resolve {} in {}: no such tag or digest", tag_or_digest, m_name);
}

Result<std::vector<ListedTag>> MemoryReader::list_tags(std::size_t limit) {
  std::vector<ListedTag> out;
  for (const auto& [tag, descriptor] : m_tags) {
    if (out.size() == limit) break;
    out.push_back({tag, descriptor.digest});
  }
  return out;
}

Result<std::string> MemoryReader::read(const oci::Descriptor& descriptor) {
  const auto found = m_blobs.find(descriptor.digest);
  if (found == m_blobs.end()) return fail("failed to read blob {} from {}: no such blob", descriptor.digest.str(), m_name);
  if (found->second.size() > oci::document_limit(descriptor)) {
    return fail("failed to read blob {} from {}: it holds {} bytes, more than the {} MiB limit", descriptor.digest.str(),
                m_name, found->second.size(), oci::document_limit(descriptor) >> 20);
  }
  HWIMG_TRY(oci::verify_content(descriptor, found->second, m_name));
  return found->second;
}

Result<void> MemoryReader::copy_blob(const oci::Descriptor& descriptor, const std::filesystem::path& destination) {
  const auto found = m_blobs.find(descriptor.digest);
  if (found == m_blobs.end()) return fail("failed to read blob {} from {}: no such blob", descriptor.digest.str(), m_name);
  HWIMG_TRY_ASSIGN(auto sink, BlobSink::create(destination, descriptor));
  HWIMG_TRY(sink.write(found->second));
  return sink.finish();
}

Result<std::vector<std::string>> MemoryReader::referrers(const std::vector<oci::Digest>& subjects) {
  std::vector<std::string> out;
  for (const auto& [digest, bytes] : m_blobs) {
    if (const auto type = m_types.find(digest); type == m_types.end() || type->second != oci::media_type::manifest) {
      continue;
    }
    const auto manifest = oci::parse_manifest(bytes);
    if (manifest && manifest->subject && std::ranges::find(subjects, manifest->subject->digest) != subjects.end()) {
      out.push_back(bytes);
    }
  }
  return out;
}

}  // namespace hwimg::image
