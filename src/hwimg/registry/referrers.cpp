#include "hwimg/registry/referrers.hpp"

#include <algorithm>

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"

namespace hwimg::registry {
namespace {

// The referrers tag's index, empty when the tag does not exist; anything but an index is refused
// (distribution-spec 1.1, "Pushing Manifests with Subject", step 2).
Result<oci::Index> read_referrers_tag(Client& client, const Reference& repository, const oci::Digest& subject) {
  const auto tagged = repository.with_tag(referrers_tag(subject));
  const auto what = fmt::format("read the referrers of {} from {}", subject.str(), tagged.str());
  HWIMG_TRY_ASSIGN(const auto answer, client.forward(tagged, ReadMethod::get, "manifests/" + tagged.tag,
                                                     {manifest_accept_header()}, oci::max_manifest_size));
  if (answer.status == 404) return oci::Index{};
  if (answer.status != 200) return fail("failed to {}: {}", what, describe_answer(answer));
  HWIMG_TRY_ASSIGN(const auto manifest, with_context(manifest_from_answer(answer, tagged), "failed to " + what));
  if (!oci::media_type::is_index(manifest.media_type)) {
    return fail("failed to {}: the tag holds a {}, not an image index", what, manifest.media_type);
  }
  return with_context(oci::parse_index(manifest.bytes), "failed to " + what);
}

std::vector<oci::Descriptor> of_type(std::vector<oci::Descriptor> descriptors, std::string_view artifact_type) {
  if (!artifact_type.empty()) {
    std::erase_if(descriptors, [&](const auto& d) { return d.artifact_type != artifact_type; });
  }
  return descriptors;
}

}  // namespace

std::string referrers_tag(const oci::Digest& subject) { return "sha256-" + subject.hex(); }

Result<AttachedReferrer> attach_referrer(Client& client, const Reference& repository, std::string_view manifest_bytes) {
  HWIMG_TRY_ASSIGN(const auto manifest, oci::parse_manifest(manifest_bytes));
  if (!manifest.subject) return fail("failed to attach an artifact to {}: it has no subject", repository.name());
  const auto& subject = manifest.subject->digest;
  AttachedReferrer out;
  out.descriptor.media_type = std::string(oci::media_type::manifest);
  out.descriptor.digest = oci::Digest::sha256_of(manifest_bytes);
  out.descriptor.size = static_cast<std::int64_t>(manifest_bytes.size());
  // The descriptor the spec asks for: the artifactType, else the config's type, and the annotations.
  out.descriptor.artifact_type = manifest.artifact_type.empty() ? manifest.config.media_type : manifest.artifact_type;
  out.descriptor.annotations = manifest.annotations;

  auto by_digest = repository;
  by_digest.tag.clear();
  by_digest.digest = out.descriptor.digest;
  HWIMG_TRY_ASSIGN(const auto stored, client.store_manifest(by_digest, manifest_bytes, oci::media_type::manifest));
  out.listed_by_registry = stored.subject_indexed;
  if (out.listed_by_registry) return out;

  HWIMG_TRY_ASSIGN(auto index, read_referrers_tag(client, repository, subject));
  const bool listed = std::ranges::any_of(index.manifests,
                                          [&](const auto& d) { return d.digest == out.descriptor.digest; });
  if (listed) return out;
  index.media_type = std::string(oci::media_type::index);
  index.manifests.push_back(out.descriptor);
  const auto bytes = oci::to_json(index);
  HWIMG_TRY(client.put_manifest(repository.with_tag(referrers_tag(subject)), bytes, oci::media_type::index));
  out.tag_index_updated = true;
  return out;
}

Result<std::vector<oci::Descriptor>> list_referrers(Client& client, const Reference& repository,
                                                    const oci::Digest& subject, std::string_view artifact_type) {
  const auto what = fmt::format("list the referrers of {} in {}", subject.str(), repository.name());
  auto path = "referrers/" + subject.str();
  if (!artifact_type.empty()) path += "?artifactType=" + std::string(artifact_type);
  HWIMG_TRY_ASSIGN(const auto answer, client.forward(repository, ReadMethod::get, path,
                                                     {fmt::format("Accept: {}", oci::media_type::index)},
                                                     oci::max_manifest_size));
  if (answer.status == 404) {
    HWIMG_TRY_ASSIGN(auto index, read_referrers_tag(client, repository, subject));
    return of_type(std::move(index.manifests), artifact_type);
  }
  if (answer.status != 200) return fail("failed to {}: {}", what, describe_answer(answer));
  HWIMG_TRY_ASSIGN(auto index, with_context(oci::parse_index(answer.body), "failed to " + what));
  // A registry may ignore the filter (it says so by leaving out OCI-Filters-Applied).
  return of_type(std::move(index.manifests), artifact_type);
}

}  // namespace hwimg::registry
