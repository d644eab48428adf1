#pragma once
// The layout end of `hwimg copy`: blobs copied in verified, several at once (a rerun skips what is
// there), then the documents, then index.json tagged under the layout lock, so an interrupted copy
// leaves the layout as it was, valid.

#include <filesystem>

#include "hwimg/copy/copy_image.hpp"
#include "hwimg/image/open_image.hpp"
#include "hwimg/registry/push_plan.hpp"

namespace hwimg::copy {

// Writes `plan` into the layout `directory`, creating it if needed: the blobs it lacks read from
// `source` by up to `options.jobs` threads (the first through `source.reader`, the others through
// readers of their own), every copier's end collected and the first failure returned (what a
// copier throws is one), before anything else is written; then the root gets the plan's root tag and
// each variant its own, replacing what had those tags, and each referrer an untagged descriptor
// unless index.json lists its digest.
[[nodiscard]] Result<void> write_to_layout(image::OpenedImage& source, const registry::ClientOptions& options,
                                           const registry::PushPlan& plan, const std::filesystem::path& directory,
                                           CopySummary& summary);

}  // namespace hwimg::copy
