#include "hwimg/copy/layout_destination.hpp"

#include <algorithm>
#include <system_error>

#include "hwimg/oci/layout.hpp"

namespace hwimg::copy {

Result<void> write_to_layout(image::ImageReader& reader, const registry::PushPlan& plan,
                             const std::filesystem::path& directory, CopySummary& summary) {
  std::vector<std::pair<oci::Descriptor, std::string>> tagged{{plan.root.descriptor, plan.root.tag}};
  for (const auto& manifest : plan.manifests) {
    if (!manifest.tag.empty()) tagged.emplace_back(manifest.descriptor, manifest.tag);
  }
  for (const auto& [descriptor, tag] : tagged) {
    if (auto valid = oci::validate_tag(tag); !valid) {
      return fail_usage("failed to copy to {}: {}", directory.string(), valid.error().message);
    }
  }
  HWIMG_TRY_ASSIGN(const auto layout, oci::Layout::open(directory, oci::OpenMode::create));
  for (const auto& blob : plan.blobs) {
    if (layout.has_blob(blob.digest)) {
      ++summary.blobs_present;
      continue;
    }
    const auto temporary = layout.temporary_file("copy");
    HWIMG_TRY(reader.copy_blob(blob, temporary));
    if (auto adopted = layout.adopt_blob(temporary, blob.digest); !adopted) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      return adopted;
    }
    ++summary.blobs_copied;
    summary.bytes_copied += static_cast<std::uint64_t>(blob.size);
  }
  for (const auto& manifest : plan.manifests) {
    HWIMG_TRY(layout.put_blob(manifest.bytes, manifest.descriptor.media_type));
  }
  HWIMG_TRY(layout.put_blob(plan.root.bytes, plan.root.descriptor.media_type));

  return layout.update_index_json([&](oci::Index& index_json) -> Result<void> {
    std::erase_if(index_json.manifests, [&](const oci::Descriptor& d) {
      const auto name = d.ref_name();
      return name && std::ranges::any_of(tagged, [&](const auto& t) { return t.second == *name; });
    });
    for (auto [descriptor, tag] : tagged) {
      descriptor.annotations[std::string(oci::ref_name_annotation)] = tag;
      index_json.manifests.push_back(std::move(descriptor));
    }
    return {};
  });
}

}  // namespace hwimg::copy
