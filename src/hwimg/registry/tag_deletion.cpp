#include "hwimg/registry/tag_deletion.hpp"

#include <random>

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"

namespace hwimg::registry {
namespace {

// Distribution's answer when deletes are off (storage.delete.enabled).
constexpr std::string_view deletes_disabled_hint =
    " (the registry does not allow deletes; a distribution registry needs storage.delete.enabled: true, "
    "REGISTRY_STORAGE_DELETE_ENABLED=true)";

bool refuses_tag_deletion(long status) { return status == 400 || status == 405; }

// image-spec 1.1's empty descriptor: `{}`, which stands for a config or layer an artifact has not.
oci::Descriptor empty_descriptor() {
  return {std::string(oci::media_type::empty), oci::Digest::sha256_of("{}"), 2, {}, {}};
}

// The manifest regctl puts at a tag to delete it alone: an empty config and layer and a
// description no other manifest has.
PlannedManifest placeholder(const Reference& tag) {
  std::random_device random;
  const auto nonce = fmt::format("{:08x}{:08x}{:08x}{:08x}", random(), random(), random(), random());
  oci::Manifest manifest;
  manifest.artifact_type = "application/vnd.hwimg.tag-deletion.v1";
  manifest.config = empty_descriptor();
  manifest.layers = {empty_descriptor()};
  manifest.annotations["org.opencontainers.image.description"] =
      fmt::format("hwimg delete: a placeholder for the tag {}, deleted with it ({})", tag.str(), nonce);
  auto bytes = oci::to_json(manifest);
  const oci::Descriptor descriptor{std::string(oci::media_type::manifest), oci::Digest::sha256_of(bytes),
                                   static_cast<std::int64_t>(bytes.size()), {}, {}};
  return {descriptor, std::move(bytes), tag.tag};
}

// regctl's way: the placeholder at the tag, then deleted by digest, taking the tag with it.
Result<void> delete_through_placeholder(Client& client, const Reference& tag, const FetchedManifest& original) {
  const auto what = fmt::format("delete {}", tag.str());
  PushPlan plan;
  plan.root = placeholder(tag);
  plan.blobs = {empty_descriptor()};
  plan.add_inline_blob("{}");
  HWIMG_TRY(with_context(client.push_plan(plan, tag), "failed to " + what));
  auto placed = tag;
  placed.tag.clear();
  placed.digest = plan.root.descriptor.digest;
  auto deleted = client.delete_manifest(placed);
  if (deleted) return {};
  // The tag goes back to what it named, so a failure loses nothing.
  if (auto restored = client.put_manifest(tag, original.bytes, original.media_type); !restored) {
    return fail("failed to {}: {}; putting the tag back on {} failed too: {}", what, deleted.error().message,
                original.digest.str(), restored.error().message);
  }
  return fail("failed to {}: {} (the tag still names {})", what, deleted.error().message, original.digest.str());
}

}  // namespace

Result<oci::Digest> delete_tag(Client& client, const Reference& tag) {
  const auto what = fmt::format("delete {}", tag.str());
  HWIMG_TRY_ASSIGN(const auto answer, client.forward(tag, ReadMethod::get, "manifests/" + tag.tag,
                                                     {manifest_accept_header()}, oci::max_manifest_size));
  if (answer.status == 404) return fail("failed to {}: no such tag ({})", what, describe(answer));
  HWIMG_TRY_ASSIGN(const auto original, with_context(manifest_from_answer(answer, tag), "failed to " + what));

  HWIMG_TRY_ASSIGN(const auto deleted, client.delete_reference(tag));
  if (deleted.status == 202) return original.digest;
  if (deleted.status == 404) return fail("failed to {}: no such tag ({})", what, describe(deleted));
  if (!refuses_tag_deletion(deleted.status)) return fail("failed to {}: {}", what, describe(deleted));
  if (deleted.status == 405) {
    // 405 is also a registry's answer when it deletes nothing at all: a digest no manifest has
    // tells which, before the tag is touched.
    auto nothing = tag;
    nothing.tag.clear();
    nothing.digest = oci::Digest::sha256_of("hwimg: a manifest no registry holds");
    HWIMG_TRY_ASSIGN(const auto probe, client.delete_reference(nothing));
    if (probe.status == 405) return fail("failed to {}: {}{}", what, describe(deleted), deletes_disabled_hint);
  }
  HWIMG_TRY(delete_through_placeholder(client, tag, original));
  return original.digest;
}

}  // namespace hwimg::registry
