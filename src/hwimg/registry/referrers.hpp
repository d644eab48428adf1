#pragma once
// The referrers of a manifest (distribution-spec 1.1): artifacts whose `subject` names it. A push
// puts them with its plan (PushPlan::add_referrer) and, where the registry lacks the referrers API,
// lists them in the index under the referrers tag; listing asks the API and falls back to that tag
// (docs/nfd.md#referrers).
//
//   auto found = registry::list_referrers(client, repo, variant_digest, "application/vnd.nfd...");

#include <string>
#include <string_view>
#include <vector>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/registry/client.hpp"

namespace hwimg::registry {

// The referrers tag schema's tag for a digest: "sha256-<hex>".
[[nodiscard]] std::string referrers_tag(const oci::Digest& subject);
// Whether `tag` has that schema's shape, `<algorithm>-<64 hex digits>` (the algorithm up to 32
// characters, the digest cut to 64), as `oras repo tags --exclude-digest-tags` tells them apart.
[[nodiscard]] bool is_referrers_tag(std::string_view tag);

// The descriptor a referrers list gives the image manifest `bytes` (`manifest` parsed): its digest
// and size, its artifactType (else its config's media type) and its annotations
// (distribution-spec 1.1, "Listing Referrers").
[[nodiscard]] oci::Descriptor referrer_descriptor(std::string_view bytes, const oci::Manifest& manifest);

// The referrers tag's index as served: anything but an image index is refused (distribution-spec
// 1.1, "Pushing Manifests with Subject", step 2).
[[nodiscard]] Result<oci::Index> read_referrers_index(std::string_view content_type, std::string_view body);

// The referrers tag's index from the answer to a GET of `tagged` (the tag of `subject`), checked as
// a manifest (size, digest, media type): empty when the tag does not exist, anything but an image
// index refused.
[[nodiscard]] Result<oci::Index> referrers_tag_index(const Response& answer, const Reference& tagged,
                                                     const oci::Digest& subject);

// Lists each of `referrers` in `index` unless it is there (by digest); false when nothing was added.
bool add_referrers(oci::Index& index, const std::vector<oci::Descriptor>& referrers);

// The descriptors of `subject`'s referrers, only those of `artifact_type` when it is not empty: the
// referrers API, or on its 404 the referrers tag's index (none: no referrers).
[[nodiscard]] Result<std::vector<oci::Descriptor>> list_referrers(Client& client, const Reference& repository,
                                                                  const oci::Digest& subject,
                                                                  std::string_view artifact_type);
// The same for several subjects, asked all at once (the API and the tag together, the tag's answer
// used where the API's is 404); one list per subject, in their order.
[[nodiscard]] Result<std::vector<std::vector<oci::Descriptor>>> list_referrers_of(
    Client& client, const Reference& repository, const std::vector<oci::Digest>& subjects,
    std::string_view artifact_type);

// The parts of list_referrers_of, for a reader that asks more in the same round: the paths to GET
// (with manifest_accept_header()), then the lists from their answers, in the same order.
[[nodiscard]] std::vector<std::string> referrers_paths(const std::vector<oci::Digest>& subjects,
                                                       std::string_view artifact_type);
[[nodiscard]] Result<std::vector<std::vector<oci::Descriptor>>> referrers_from_answers(
    const Reference& repository, const std::vector<oci::Digest>& subjects, std::string_view artifact_type,
    const std::vector<Response>& answers);

}  // namespace hwimg::registry
