#include "hwimg/registry/push_plan.hpp"

#include <algorithm>
#include <set>

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/layout.hpp"
#include "hwimg/oci/layout_referrers.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/registry/referrers.hpp"

namespace hwimg::registry {

Result<void> PushPlan::add_manifest(PlannedManifest planned) {
  HWIMG_TRY_ASSIGN(const auto manifest, with_context(oci::parse_manifest(planned.bytes),
                                                     "failed to read manifest " + planned.descriptor.digest.str()));
  add_blobs_of(manifest);
  if (!planned.tag.empty()) {
    HWIMG_TRY(with_context(validate_registry_tag(planned.tag), "failed to plan the push"));
  }
  manifests.push_back(std::move(planned));
  return {};
}

void PushPlan::add_blobs_of(const oci::Manifest& manifest) {
  const auto add_blob = [this](const oci::Descriptor& blob) {
    if (std::ranges::none_of(blobs, [&](const oci::Descriptor& b) { return b.digest == blob.digest; })) {
      blobs.push_back(blob);
    }
  };
  add_blob(manifest.config);
  for (const auto& layer : manifest.layers) add_blob(layer);
}

Result<void> PushPlan::add_referrer(std::string bytes) {
  const auto digest = oci::Digest::sha256_of(bytes);
  if (std::ranges::any_of(referrers, [&](const PlannedManifest& r) { return r.descriptor.digest == digest; })) {
    return {};
  }
  HWIMG_TRY_ASSIGN(const auto manifest,
                   with_context(oci::parse_manifest(bytes), "failed to read referrer " + digest.str()));
  if (!manifest.subject) return fail("failed to plan referrer {}: it has no subject", digest.str());
  add_blobs_of(manifest);
  auto descriptor = referrer_descriptor(bytes, manifest);
  referrers.push_back({std::move(descriptor), std::move(bytes), ""});
  return {};
}

void PushPlan::add_inline_blob(std::string bytes) {
  auto digest = oci::Digest::sha256_of(bytes);
  inline_blobs.emplace(std::move(digest), std::move(bytes));
}

void PushPlan::order_blobs() {
  std::stable_sort(blobs.begin(), blobs.end(),
                   [](const oci::Descriptor& a, const oci::Descriptor& b) { return a.size > b.size; });
}

Result<PushPlan> PushPlan::from_documents(std::string_view what, PlannedManifest root,
                                          std::vector<PlannedManifest> variants) {
  PushPlan plan;
  if (oci::media_type::is_manifest(root.descriptor.media_type)) {
    plan.root = root;
    root.tag.clear();
    HWIMG_TRY(plan.add_manifest(std::move(root)));
    plan.manifests.clear();
    return plan;
  }
  if (!oci::media_type::is_index(root.descriptor.media_type)) {
    return fail("failed to {}: its root has media type \"{}\", not a manifest or index", what,
                root.descriptor.media_type);
  }
  HWIMG_TRY_ASSIGN(const auto index,
                   with_context(oci::parse_index(root.bytes), "failed to read index " + root.descriptor.digest.str()));
  for (const auto& entry : index.manifests) {
    if (!oci::media_type::is_manifest(entry.media_type)) {
      return fail("failed to {}: index entry {} has media type \"{}\" (nested indexes are not supported)", what,
                  entry.digest.str(), entry.media_type);
    }
  }
  plan.root = std::move(root);
  for (auto& variant : variants) HWIMG_TRY(plan.add_manifest(std::move(variant)));
  return plan;
}

Result<PushPlan> plan_push(const std::filesystem::path& layout_dir, std::string_view tag,
                           std::string_view destination_tag, const std::set<oci::Digest>& external) {
  HWIMG_TRY_ASSIGN(const auto layout, oci::Layout::open(layout_dir));
  HWIMG_TRY_ASSIGN(const auto root, layout.resolve(tag));
  HWIMG_TRY_ASSIGN(const auto index_json, layout.read_index_json());
  const auto what = "plan the push of " + layout_dir.string();
  HWIMG_TRY_ASSIGN(auto root_bytes, layout.read_blob(root));
  std::vector<PlannedManifest> variants;
  if (oci::media_type::is_index(root.media_type)) {
    HWIMG_TRY_ASSIGN(const auto index,
                     with_context(oci::parse_index(root_bytes), "failed to read index " + root.digest.str()));
    const std::string prefix = std::string(tag) + "-";
    for (const auto& child : index.manifests) {
      if (!oci::media_type::is_manifest(child.media_type)) break;  // from_documents says why
      std::string dest;
      for (const auto& d : index_json.manifests) {
        const auto name = d.ref_name();
        if (!tag.empty() && d.digest == child.digest && name && name->starts_with(prefix)) {
          dest = std::string(destination_tag) + "-" + name->substr(prefix.size());
          break;
        }
      }
      HWIMG_TRY_ASSIGN(auto bytes, layout.read_blob(child));
      variants.push_back({child, std::move(bytes), std::move(dest)});
    }
  } else if (!oci::media_type::is_manifest(root.media_type)) {
    return fail("failed to {}: \"{}\" has media type \"{}\", not a manifest or index", what, tag, root.media_type);
  }
  HWIMG_TRY_ASSIGN(auto plan, PushPlan::from_documents(what, {root, std::move(root_bytes), std::string(destination_tag)},
                                                       std::move(variants)));
  plan.layout = layout_dir;
  // Referrers the layout keeps (a copy brought signatures or SBOMs along) go up with the image.
  std::vector<oci::Digest> subjects{root.digest};
  for (const auto& manifest : plan.manifests) subjects.push_back(manifest.descriptor.digest);
  HWIMG_TRY_ASSIGN(auto referrers, oci::layout_referrers(layout, subjects));
  for (auto& referrer : referrers) HWIMG_TRY(plan.add_referrer(std::move(referrer)));
  for (const auto& blob : plan.blobs) {
    if (!layout.has_blob(blob.digest) && !external.contains(blob.digest)) {
      return fail("failed to plan the push of {}: blob {} is missing from the layout", layout_dir.string(),
                  blob.digest.str());
    }
  }
  plan.order_blobs();
  return plan;
}

Result<PushPlan> plan_push_to(const std::filesystem::path& layout_dir, std::string_view tag,
                              const Reference& destination, const std::set<oci::Digest>& external) {
  if (destination.digest) {
    return fail_usage("failed to push to {}: name a tag, not a digest (the digest comes from the content)",
                      destination.str());
  }
  const std::string destination_tag = !destination.tag.empty() ? destination.tag
                                      : !tag.empty()            ? std::string(tag)
                                                                : std::string("latest");
  HWIMG_TRY(validate_registry_tag(destination_tag));
  return plan_push(layout_dir, tag, destination_tag, external);
}

}  // namespace hwimg::registry
