#pragma once
// The referrers a copy carries along (NFD compatibility artifacts, signatures, SBOMs): the
// manifests whose `subject` is a kept variant (or the index, when it is copied unchanged), found
// through the source's referrers API or tag, or among the manifests a source layout's index.json
// lists, then put in the copy's plan with the image (registry::PushPlan::add_referrer): pushed as
// `hwimg push` pushes its own, or kept untagged in a destination layout (docs/nfd.md#referrers).

#include <string>
#include <vector>

#include "hwimg/registry/client.hpp"

namespace hwimg::copy {

// The referrer manifests of `subjects` in `source`, exactly as served. Referrers of referrers are
// not followed.
[[nodiscard]] Result<std::vector<registry::FetchedManifest>> find_referrers(registry::Client& client,
                                                                            const registry::Reference& source,
                                                                            const std::vector<oci::Digest>& subjects);

}  // namespace hwimg::copy
