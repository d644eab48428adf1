#include "hwimg/compat/artifact.hpp"

#include <algorithm>

#include "hwimg/compat/nfd_spec.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"

namespace hwimg::compat {
namespace {

oci::Descriptor blob_descriptor(std::string_view media_type, std::string_view bytes) {
  oci::Descriptor out;
  out.media_type = std::string(media_type);
  out.digest = oci::Digest::sha256_of(bytes);
  out.size = static_cast<std::int64_t>(bytes.size());
  return out;
}

}  // namespace

std::string artifact_manifest(const oci::Descriptor& subject, std::string_view yaml) {
  oci::Manifest manifest;
  manifest.artifact_type = std::string(nfd_artifact_type);
  manifest.config = blob_descriptor(oci::media_type::empty, empty_config);
  manifest.layers.push_back(blob_descriptor(nfd_spec_media_type, yaml));
  // Only what identifies the subject: its platform and annotations are the subject's own business.
  manifest.subject = oci::Descriptor{subject.media_type, subject.digest, subject.size, {}, {}, {}};
  return oci::to_json(manifest);
}

Result<std::size_t> plan_artifacts(registry::PushPlan& plan) {
  std::vector<oci::Descriptor> variants;
  for (const auto& m : plan.manifests) {
    if (oci::annotation::has_hwimg_pairs(m.descriptor.annotations)) variants.push_back(m.descriptor);
  }
  if (plan.manifests.empty() && oci::media_type::is_manifest(plan.root.descriptor.media_type)) {
    HWIMG_TRY_ASSIGN(const auto manifest, oci::parse_manifest(plan.root.bytes));
    if (oci::annotation::has_hwimg_pairs(manifest.annotations)) {
      auto self = plan.root.descriptor;
      self.annotations = manifest.annotations;
      variants.push_back(std::move(self));
    }
  }
  for (const auto& variant : variants) {
    HWIMG_TRY_ASSIGN(auto yaml, with_context(nfd_spec_yaml(variant),
                                             fmt::format("failed to describe variant {} for NFD (--no-compat pushes without the artifacts)",
                                                         variant.digest.str())));
    plan.add_inline_blob(std::string(empty_config));
    auto manifest = artifact_manifest(variant, yaml);
    plan.add_inline_blob(std::move(yaml));
    HWIMG_TRY(plan.add_referrer(std::move(manifest)));
  }
  plan.order_blobs();
  return variants.size();
}

Result<registry::PushSummary> push_with_artifacts(registry::Client& client, registry::PushPlan plan,
                                                  const registry::Reference& destination,
                                                  const registry::ExternalBlobs& external, CompatArtifacts compat,
                                                  util::Output& output) {
  std::size_t planned = 0;
  if (compat == CompatArtifacts::attach) {
    HWIMG_TRY_ASSIGN(planned, plan_artifacts(plan));
  }
  HWIMG_TRY_ASSIGN(auto pushed, client.push_plan(std::move(plan), destination, external));
  pushed.compat_artifacts = planned - std::min(planned, pushed.referrer_failures.size());
  for (const auto& failure : pushed.referrer_failures) {
    output.warning(fmt::format("{} (the image is pushed; --no-compat skips the artifacts)", failure));
  }
  return pushed;
}

}  // namespace hwimg::compat
