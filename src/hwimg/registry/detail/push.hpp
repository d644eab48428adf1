#pragma once
// Pushing a plan: blobs in parallel on one multi handle (HEAD, mount or upload, each blob once),
// then the variant manifests, then the index beside the referrers, so readers never see a
// dangling reference. Internal to hwimg::registry; callers use Client::push_plan.

#include <filesystem>
#include <string_view>

#include "hwimg/registry/client.hpp"
#include "hwimg/registry/push_plan.hpp"
#include "hwimg/registry/detail/session.hpp"

namespace hwimg::registry {

[[nodiscard]] Result<PushSummary> push_plan(Session& session, PushPlan plan, const Reference& destination,
                                            const ExternalBlobs& external);

}  // namespace hwimg::registry
