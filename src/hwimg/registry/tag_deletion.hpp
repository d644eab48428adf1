#pragma once
// Deleting one tag of a repository, never the manifest it names with every other tag naming it
// (docs/compatibility.md#deleting-manifests): the registry's own tag deletion where it has one,
// else regctl's way of putting a placeholder manifest at the tag and deleting that by digest.

#include "hwimg/registry/client.hpp"

namespace hwimg::registry {

// Removes the tag `tag` names and returns the digest it named; the manifest stays, with its other
// tags. DELETE /v2/<name>/manifests/<tag> first (distribution-spec 1.1); a registry that answers
// 400 or 405 to that (distribution 2.8.2: 400 DIGEST_INVALID) gets a small manifest unique to this
// deletion put at the tag, which is then deleted by digest. A registry that allows no deletes at
// all is told apart first, so the tag is left as it was; should the placeholder's deletion fail,
// the tag is put back on its manifest.
[[nodiscard]] Result<oci::Digest> delete_tag(Client& client, const Reference& tag);

}  // namespace hwimg::registry
