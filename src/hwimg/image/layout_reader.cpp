#include "hwimg/image/layout_reader.hpp"

#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

#include "hwimg/image/blob_sink.hpp"
#include "hwimg/util/fd.hpp"
#include "hwimg/util/files.hpp"

#include "hwimg/oci/layout_referrers.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::image {

Result<std::unique_ptr<LayoutReader>> LayoutReader::open(const std::filesystem::path& directory) {
  HWIMG_TRY_ASSIGN(auto layout, oci::Layout::open(directory));
  HWIMG_TRY_ASSIGN(auto index_json, layout.read_index_json());
  return std::unique_ptr<LayoutReader>(new LayoutReader(std::move(layout), std::move(index_json)));
}

LayoutReader::LayoutReader(oci::Layout layout, oci::Index index_json)
    : m_layout(std::move(layout)), m_index_json(std::move(index_json)) {
  for (const auto& descriptor : m_index_json.manifests) {
    if (const auto tag = descriptor.ref_name()) m_tags[descriptor.digest.str()].push_back(*tag);
  }
}

std::string LayoutReader::name() const {
  return "oci:" + m_layout.root().string();
}

Result<oci::Descriptor> LayoutReader::resolve(std::string_view tag_or_digest) {
  if (!tag_or_digest.starts_with("sha256:")) return m_layout.resolve(tag_or_digest);
  for (const auto& descriptor : m_index_json.manifests) {
    if (descriptor.digest.str() == tag_or_digest) return descriptor;
  }
  // A variant without a tag of its own ("oci:DIR@sha256:...", as `select` prints it) is listed only
  // by the index that holds it.
  for (const auto& listed : m_index_json.manifests) {
    if (!oci::media_type::is_index(listed.media_type)) continue;
    const auto bytes = m_layout.read_blob(listed);
    const auto index = bytes ? oci::parse_index(*bytes) : std::unexpected(bytes.error());
    if (!index) continue;
    for (const auto& descriptor : index->manifests) {
      if (descriptor.digest.str() == tag_or_digest) return descriptor;
    }
  }
  return fail("failed to resolve {} in {}: no image of the layout has that digest", tag_or_digest,
              m_layout.root().string());
}

Result<std::string> LayoutReader::read(const oci::Descriptor& descriptor) {
  return m_layout.read_blob(descriptor);
}

Result<void> LayoutReader::copy_blob(const oci::Descriptor& descriptor, const std::filesystem::path& destination) {
  auto opened = util::open_regular_file(m_layout.blob_path(descriptor.digest));
  if (!opened) {
    return fail("failed to read blob {} from {}: {}", descriptor.digest.str(), m_layout.root().string(),
                opened.error().message);
  }
  const auto source = std::move(*opened);
  HWIMG_TRY_ASSIGN(auto sink, BlobSink::create(destination, descriptor));
  char buffer[1 << 16];
  while (true) {
    const auto n = ::read(source.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("failed to read blob {}: {}", descriptor.digest.str(), util::errno_text(errno));
    if (n == 0) break;
    HWIMG_TRY(sink.write(std::string_view(buffer, static_cast<std::size_t>(n))));
  }
  return sink.finish();
}

std::optional<std::filesystem::path> LayoutReader::local_blob(const oci::Digest& digest) const {
  return m_layout.blob_path(digest);
}

Result<std::vector<std::string>> LayoutReader::referrers(const std::vector<oci::Digest>& subjects) {
  return oci::layout_referrers(m_layout, subjects);
}

Result<std::vector<ListedTag>> LayoutReader::list_tags(std::size_t limit) {
  std::vector<ListedTag> out;
  for (const auto& descriptor : m_index_json.manifests) {
    if (out.size() == limit) break;
    if (auto tag = descriptor.ref_name()) out.push_back({std::move(*tag), descriptor.digest});
  }
  return out;
}

std::string LayoutReader::pinned_reference(const oci::Digest& digest, std::string_view preferred_tag) const {
  const auto tags = m_tags.find(digest.str());
  if (tags == m_tags.end() || tags->second.empty()) return name() + "@" + digest.str();
  for (const auto& tag : tags->second) {
    if (tag == preferred_tag) return name() + ":" + tag;
  }
  return name() + ":" + tags->second.front();
}

}  // namespace hwimg::image
