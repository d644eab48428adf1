#pragma once
// An ImageReader over documents held in memory: images built by unit tests without a layout or a
// registry, and the same verification as the real readers.

#include <map>
#include <string>

#include "hwimg/image/reader.hpp"

namespace hwimg::image {

class MemoryReader final : public ImageReader {
public:
  explicit MemoryReader(std::string name = "memory") : m_name(std::move(name)) {}

  // Stores `bytes` and returns their descriptor.
  oci::Descriptor add(std::string bytes, std::string_view media_type);
  void tag(const std::string& tag, const oci::Descriptor& descriptor) { m_tags[tag] = descriptor; }

  [[nodiscard]] std::string name() const override { return m_name; }
  [[nodiscard]] Result<oci::Descriptor> resolve(std::string_view tag_or_digest) override;
  [[nodiscard]] Result<std::string> read(const oci::Descriptor& descriptor) override;
  [[nodiscard]] Result<void> copy_blob(const oci::Descriptor& descriptor,
                                       const std::filesystem::path& destination) override;
  [[nodiscard]] std::optional<std::filesystem::path> local_blob(const oci::Digest&) const override {
    return std::nullopt;
  }
  // The stored image manifests whose subject is one of `subjects`, in digest order.
  [[nodiscard]] Result<std::vector<std::string>> referrers(const std::vector<oci::Digest>& subjects) override;
  // Its tags in name order, each with the digest it names.
  [[nodiscard]] Result<std::vector<ListedTag>> list_tags(std::size_t limit) override;
  [[nodiscard]] std::string pinned_reference(const oci::Digest& digest, std::string_view) const override {
    return m_name + "@" + digest.str();
  }

  // Replaces stored bytes without changing their digest, as a corrupt source would.
  void corrupt(const oci::Digest& digest, std::string bytes) { m_blobs[digest] = std::move(bytes); }

private:
  std::string m_name;
  std::map<oci::Digest, std::string> m_blobs;
  std::map<oci::Digest, std::string> m_types;
  std::map<std::string, oci::Descriptor> m_tags;
};

}  // namespace hwimg::image
