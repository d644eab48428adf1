#pragma once
// The layout end of `hwimg copy`: blobs copied in verified (a rerun skips what is there), then the
// documents, then index.json tagged under the layout lock, so an interrupted copy leaves the
// layout as it was, valid.

#include <filesystem>

#include "hwimg/copy/copy_image.hpp"
#include "hwimg/image/reader.hpp"
#include "hwimg/registry/push_plan.hpp"

namespace hwimg::copy {

// Writes `plan` (blobs read through `reader`) into the layout `directory`, creating it if needed;
// the root gets the plan's root tag and each variant its own, replacing what had those tags.
[[nodiscard]] Result<void> write_to_layout(image::ImageReader& reader, const registry::PushPlan& plan,
                                           const std::filesystem::path& directory, CopySummary& summary);

}  // namespace hwimg::copy
