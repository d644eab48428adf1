#pragma once
// The referrers a copy carries along (NFD compatibility artifacts, signatures, SBOMs): the
// manifests whose `subject` is a kept variant (or the index, when it is copied unchanged), found
// through the source's referrers API or tag, their blobs moved with the image's, and each attached
// at the destination as `hwimg push` attaches its own (docs/nfd.md#referrers).

#include <string>
#include <vector>

#include "hwimg/registry/client.hpp"
#include "hwimg/registry/push_plan.hpp"

namespace hwimg::copy {

// The referrer manifests of `subjects` in `source`, exactly as served. Referrers of referrers are
// not followed.
[[nodiscard]] Result<std::vector<registry::FetchedManifest>> find_referrers(registry::Client& client,
                                                                            const registry::Reference& source,
                                                                            const std::vector<oci::Digest>& subjects);

// Adds the referrers' configs and layers to the plan's blobs.
[[nodiscard]] Result<void> add_referrer_blobs(registry::PushPlan& plan,
                                              const std::vector<registry::FetchedManifest>& referrers);

// Puts each referrer into `destination` and lists it there (the referrers tag where the registry
// lacks the API); the image and the referrers' blobs must be there already.
[[nodiscard]] Result<void> attach_referrers(registry::Client& client, const registry::Reference& destination,
                                            const std::vector<registry::FetchedManifest>& referrers);

}  // namespace hwimg::copy
