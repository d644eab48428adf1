#pragma once
// An ImageReader over an OCI image layout on disk.

#include <map>
#include <memory>
#include <vector>

#include "hwimg/image/reader.hpp"
#include "hwimg/oci/layout.hpp"

namespace hwimg::image {

class LayoutReader final : public ImageReader {
public:
  // `directory` is kept as given, so messages show the path the user wrote.
  [[nodiscard]] static Result<std::unique_ptr<LayoutReader>> open(const std::filesystem::path& directory);

  [[nodiscard]] std::string name() const override;
  [[nodiscard]] Result<oci::Descriptor> resolve(std::string_view tag_or_digest) override;
  [[nodiscard]] Result<std::string> read(const oci::Descriptor& descriptor) override;
  [[nodiscard]] Result<void> copy_blob(const oci::Descriptor& descriptor,
                                       const std::filesystem::path& destination) override;
  [[nodiscard]] std::optional<std::filesystem::path> local_blob(const oci::Digest& digest) const override;
  [[nodiscard]] Result<std::vector<std::string>> referrers(const std::vector<oci::Digest>& subjects) override;
  [[nodiscard]] Result<std::vector<ListedTag>> list_tags(std::size_t limit) override;
  [[nodiscard]] std::string pinned_reference(const oci::Digest& digest, std::string_view preferred_tag) const override;

  [[nodiscard]] const oci::Layout& layout() const { return m_layout; }

private:
  LayoutReader(oci::Layout layout, oci::Index index_json);

  oci::Layout m_layout;
  oci::Index m_index_json;
  std::map<std::string, std::vector<std::string>> m_tags;  // digest -> its tags in index.json
};

}  // namespace hwimg::image
