#pragma once
// A registry reader whose documents go through the user's blob cache: manifests and configs read
// by digest never change, so a rebuild on the same base asks the registry only what its tag names
// now (one request) and reads the platform manifest and config from the cache.

#include <memory>

#include "hwimg/image/blob_cache.hpp"
#include "hwimg/image/reader.hpp"

namespace hwimg::image {

class CachedReader final : public ImageReader {
public:
  // `cache` must outlive the reader.
  CachedReader(std::unique_ptr<ImageReader> inner, BlobCache& cache) : m_inner(std::move(inner)), m_cache(cache) {}

  [[nodiscard]] std::string name() const override { return m_inner->name(); }
  [[nodiscard]] Result<oci::Descriptor> resolve(std::string_view tag_or_digest) override {
    return m_inner->resolve(tag_or_digest);
  }
  [[nodiscard]] Result<std::string> read(const oci::Descriptor& descriptor) override {
    return m_cache.read_document(*m_inner, descriptor);
  }
  [[nodiscard]] Result<void> copy_blob(const oci::Descriptor& descriptor,
                                       const std::filesystem::path& destination) override {
    return m_inner->copy_blob(descriptor, destination);
  }
  [[nodiscard]] std::optional<std::filesystem::path> local_blob(const oci::Digest& digest) const override {
    return m_inner->local_blob(digest);
  }
  [[nodiscard]] Result<std::vector<std::string>> referrers(const std::vector<oci::Digest>& subjects) override {
    return m_inner->referrers(subjects);
  }
  [[nodiscard]] Result<std::vector<ListedTag>> list_tags(std::size_t limit) override {
    return m_inner->list_tags(limit);
  }
  [[nodiscard]] std::string pinned_reference(const oci::Digest& digest, std::string_view preferred_tag) const override {
    return m_inner->pinned_reference(digest, preferred_tag);
  }

private:
  std::unique_ptr<ImageReader> m_inner;
  BlobCache& m_cache;
};

}  // namespace hwimg::image
