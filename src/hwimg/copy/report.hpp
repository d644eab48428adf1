#pragma once
// What `hwimg copy` prints: one summary line, or JSON for scripts.

#include <string>

#include "hwimg/copy/copy_image.hpp"

namespace hwimg::copy {

// "copied SRC to DEST@sha256:…: 2 of 8 variants; 5 blobs mounted, …"
[[nodiscard]] std::string summary_line(const CopyRequest& request, const CopySummary& summary);

// {"source", "destination", "digest", "variants": {"kept", "total"}, "blobs": {...}}
[[nodiscard]] std::string render_json(const CopyRequest& request, const CopySummary& summary);

}  // namespace hwimg::copy
