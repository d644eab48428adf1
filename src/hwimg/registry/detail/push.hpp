#pragma once
// Pushing an image layout: blobs in parallel on one multi handle (HEAD, mount or upload, each
// blob once), then the variant manifests, then the index, so readers never see a dangling
// reference. Internal to hwimg::registry; callers use Client::push_layout.

#include <filesystem>
#include <string_view>

#include "hwimg/registry/client.hpp"
#include "hwimg/registry/push_plan.hpp"
#include "hwimg/registry/detail/session.hpp"

namespace hwimg::registry {

[[nodiscard]] Result<PushSummary> push_layout(Session& session, const std::filesystem::path& layout_dir,
                                              std::string_view tag, const Reference& destination,
                                              const ExternalBlobs& external);
[[nodiscard]] Result<PushSummary> push_plan(Session& session, PushPlan plan, const Reference& destination,
                                            const ExternalBlobs& external);

}  // namespace hwimg::registry
