#pragma once
// The referrers of a manifest (distribution-spec 1.1): artifacts whose `subject` names it. Attaching
// puts the artifact and, where the registry lacks the referrers API, lists it in the index under the
// referrers tag; listing asks the API and falls back to that tag (docs/nfd.md#referrers).
//
//   auto attached = registry::attach_referrer(client, repo, artifact_manifest_bytes);
//   auto found = registry::list_referrers(client, repo, variant_digest, "application/vnd.nfd...");

#include <string>
#include <string_view>
#include <vector>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/registry/client.hpp"

namespace hwimg::registry {

// The referrers tag schema's tag for a digest: "sha256-<hex>".
[[nodiscard]] std::string referrers_tag(const oci::Digest& subject);

struct AttachedReferrer {
  oci::Descriptor descriptor;   // of the artifact manifest, with its artifactType
  bool listed_by_registry = false;  // the registry answered OCI-Subject: no tag index kept
  bool tag_index_updated = false;   // the referrers tag was written (false: it already listed it)
};

// Puts an OCI image manifest that has a `subject` into `repository` by digest; without OCI-Subject
// in the answer, reads the referrers tag's index (none: empty), adds the manifest's descriptor
// unless listed, and puts the index back under that tag.
[[nodiscard]] Result<AttachedReferrer> attach_referrer(Client& client, const Reference& repository,
                                                       std::string_view manifest_bytes);

// The descriptors of `subject`'s referrers, only those of `artifact_type` when it is not empty: the
// referrers API, or on its 404 the referrers tag's index (none: no referrers).
[[nodiscard]] Result<std::vector<oci::Descriptor>> list_referrers(Client& client, const Reference& repository,
                                                                  const oci::Digest& subject,
                                                                  std::string_view artifact_type);

}  // namespace hwimg::registry
