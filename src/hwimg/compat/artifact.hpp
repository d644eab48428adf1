#pragma once
// NFD image-compatibility artifacts on a registry: one per variant, an OCI image manifest with
// artifactType, the empty config, one YAML layer and the variant as `subject`
// (docs/nfd.md#the-artifact); pushed with the image, found again through the referrers.
//
//   auto pushed = compat::push_with_artifacts(client, std::move(plan), destination, {}, CompatArtifacts::attach, out);

#include <cstddef>
#include <string>
#include <string_view>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/registry/push_plan.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::compat {

// The empty descriptor's content (image-spec 1.1): the artifact's config.
inline constexpr std::string_view empty_config = "{}";

// The artifact manifest for `yaml` about `subject` (canonical JSON, no timestamp: same inputs,
// same digest, so a second push finds it listed and adds nothing).
[[nodiscard]] std::string artifact_manifest(const oci::Descriptor& subject, std::string_view yaml);

enum class CompatArtifacts { attach, skip };  // with a push (--no-compat: skip)

// Adds to `plan` one artifact for every variant manifest that carries org.hwimg.* annotations (or
// for the single manifest), with its config and spec as in-memory blobs; returns how many. The
// push puts them beside the root and lists them (registry::PushPlan::referrers).
[[nodiscard]] Result<std::size_t> plan_artifacts(registry::PushPlan& plan);

// Pushes `plan` to `destination` with, unless `compat` is skip, the artifacts plan_artifacts adds;
// each artifact the registry refuses is a warning on `output` (the image itself is pushed), and
// the summary counts those attached.
[[nodiscard]] Result<registry::PushSummary> push_with_artifacts(registry::Client& client, registry::PushPlan plan,
                                                                const registry::Reference& destination,
                                                                const registry::ExternalBlobs& external,
                                                                CompatArtifacts compat, util::Output& output);

}  // namespace hwimg::compat
