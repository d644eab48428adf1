#include <algorithm>

#include "hwimg/build/builder.hpp"

namespace hwimg::build {
namespace {

constexpr std::string_view variant_key = "org.hwimg.variant";

// The variants of the image tagged `tag` before this build, in their index order.
std::vector<oci::Descriptor> previous_variants(const oci::Layout& layout, const oci::Index& index_json,
                                               const std::string& tag) {
  for (const auto& d : index_json.manifests) {
    if (d.ref_name() == tag && oci::media_type::is_index(d.media_type)) {
      if (auto bytes = layout.read_blob(d)) {
        if (auto index = oci::parse_index(*bytes)) {
          return index->manifests;
        }
      }
    }
  }
  return {};
}

}  // namespace

Result<WrittenIndex> write_index(const oci::Layout& layout, const std::string& tag,
                                    const std::vector<BuiltVariant>& variants, const oci::Annotations& annotations,
                                    IndexMerge merge) {
  oci::Descriptor index_descriptor;
  std::size_t count = 0;
  HWIMG_TRY(layout.update_index_json([&](oci::Index& index_json) -> Result<void> {
    auto old_variants = previous_variants(layout, index_json, tag);
    oci::Index index;
    index.annotations = annotations;
    if (merge == IndexMerge::keep_other_variants) {
      index.manifests = old_variants;
    }
    for (const auto& built : variants) {
      const auto same = [&](const oci::Descriptor& d) { return d.annotation(variant_key) == built.id; };
      if (const auto it = std::ranges::find_if(index.manifests, same); it != index.manifests.end()) {
        *it = built.manifest;
      } else {
        index.manifests.push_back(built.manifest);
      }
    }
    HWIMG_TRY_ASSIGN(index_descriptor, layout.put_blob(oci::to_json(index), oci::media_type::index));
    count = index.manifests.size();

    // Drop the old tags of this image (TAG and TAG-<id> of old and new variants), then add the new.
    std::vector<std::string> stale{tag};
    for (const auto& d : old_variants) {
      if (const auto id = d.annotation(variant_key)) stale.push_back(tag + "-" + *id);
    }
    for (const auto& d : index.manifests) {
      if (const auto id = d.annotation(variant_key)) stale.push_back(tag + "-" + *id);
    }
    std::erase_if(index_json.manifests, [&](const oci::Descriptor& d) {
      const auto name = d.ref_name();
      return name && std::ranges::find(stale, *name) != stale.end();
    });
    auto tagged_index = index_descriptor;
    tagged_index.annotations[std::string(oci::ref_name_annotation)] = tag;
    index_json.manifests.push_back(tagged_index);
    for (const auto& d : index.manifests) {
      auto tagged = d;
      tagged.annotations[std::string(oci::ref_name_annotation)] = tag + "-" + d.annotation(variant_key).value_or("");
      index_json.manifests.push_back(tagged);
    }
    return {};
  }));
  return WrittenIndex{index_descriptor, count};
}

}  // namespace hwimg::build
