#include "hwimg/registry/detail/push_plan.hpp"

#include <algorithm>
#include <set>

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/layout.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/reference.hpp"

namespace hwimg::registry {

Result<PushPlan> plan_push(const std::filesystem::path& layout_dir, std::string_view tag,
                           std::string_view destination_tag, const std::set<oci::Digest>& external) {
  HWIMG_TRY_ASSIGN(const auto layout, oci::Layout::open(layout_dir));
  HWIMG_TRY_ASSIGN(const auto root, layout.resolve(tag));
  HWIMG_TRY_ASSIGN(const auto index_json, layout.read_index_json());

  PushPlan plan;
  plan.layout = layout_dir;
  std::set<oci::Digest> seen;
  const auto add_manifest = [&](const oci::Descriptor& descriptor, std::string bytes, std::string dest) -> Result<void> {
    HWIMG_TRY_ASSIGN(const auto manifest,
                     with_context(oci::parse_manifest(bytes), "failed to read manifest " + descriptor.digest.str()));
    if (seen.insert(manifest.config.digest).second) plan.blobs.push_back(manifest.config);
    for (const auto& layer : manifest.layers) {
      if (seen.insert(layer.digest).second) plan.blobs.push_back(layer);
    }
    if (!dest.empty()) {
      HWIMG_TRY(with_context(validate_registry_tag(dest), "failed to plan the push"));
    }
    plan.manifests.push_back(PlannedManifest{descriptor, std::move(bytes), std::move(dest)});
    return {};
  };

  HWIMG_TRY_ASSIGN(auto root_bytes, layout.read_blob(root));
  plan.root = PlannedManifest{root, root_bytes, std::string(destination_tag)};
  if (oci::media_type::is_manifest(root.media_type)) {
    HWIMG_TRY(add_manifest(root, std::move(root_bytes), ""));
    plan.manifests.clear();
  } else if (oci::media_type::is_index(root.media_type)) {
    HWIMG_TRY_ASSIGN(const auto index,
                     with_context(oci::parse_index(plan.root.bytes), "failed to read index " + root.digest.str()));
    for (const auto& child : index.manifests) {
      if (!oci::media_type::is_manifest(child.media_type)) {
        return fail("failed to plan the push of {}: index entry {} has media type \"{}\" (nested indexes are not "
                    "supported)", layout_dir.string(), child.digest.str(), child.media_type);
      }
      std::string dest;
      const std::string prefix = std::string(tag) + "-";
      for (const auto& d : index_json.manifests) {
        const auto name = d.ref_name();
        if (!tag.empty() && d.digest == child.digest && name && name->starts_with(prefix)) {
          dest = std::string(destination_tag) + "-" + name->substr(prefix.size());
          break;
        }
      }
      HWIMG_TRY_ASSIGN(auto bytes, layout.read_blob(child));
      HWIMG_TRY(add_manifest(child, std::move(bytes), std::move(dest)));
    }
  } else {
    return fail("failed to plan the push of {}: \"{}\" has media type \"{}\", not a manifest or index",
                layout_dir.string(), tag, root.media_type);
  }
  for (const auto& blob : plan.blobs) {
    if (!layout.has_blob(blob.digest) && !external.contains(blob.digest)) {
      return fail("failed to plan the push of {}: blob {} is missing from the layout", layout_dir.string(),
                  blob.digest.str());
    }
  }
  std::stable_sort(plan.blobs.begin(), plan.blobs.end(),
                   [](const oci::Descriptor& a, const oci::Descriptor& b) { return a.size > b.size; });
  return plan;
}

}  // namespace hwimg::registry
