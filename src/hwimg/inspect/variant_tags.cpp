#include "hwimg/inspect/variant_tags.hpp"

namespace hwimg::inspect {

std::vector<std::string> variant_tags(std::span<const image::ListedTag> listed, const oci::Digest& digest,
                                      std::string_view index_tag, const std::optional<std::string>& variant_id) {
  const auto conventional = index_tag.empty() || !variant_id ? std::string()
                                                             : std::string(index_tag) + "-" + *variant_id;
  std::vector<std::string> tags;
  for (const auto& tag : listed) {
    const bool names_it = tag.digest ? *tag.digest == digest : !conventional.empty() && tag.name == conventional;
    if (names_it) tags.push_back(tag.name);
  }
  return tags;
}

}  // namespace hwimg::inspect
