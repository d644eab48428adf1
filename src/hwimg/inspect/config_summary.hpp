#pragma once
// What `inspect` shows of a variant's image config: how the container starts (entrypoint, cmd,
// working directory, user), when it was made, the environment a node acts on (HWIMG_*, NVIDIA_*,
// CUDA_VERSION: docs/selection.md#nvidia_require_cuda) and the labels (issue 25).

#include <string>
#include <string_view>
#include <vector>

#include "hwimg/oci/documents.hpp"

namespace hwimg::inspect {

// Whether a config of this media type is an image config (OCI or Docker) `inspect` reads.
[[nodiscard]] bool is_image_config(std::string_view media_type);

// Whether `inspect`'s table shows this environment entry ("NAME=value") in full; the others are
// counted and named.
[[nodiscard]] bool env_shown(std::string_view entry);

// The table's lines about the config, without indentation; labels equal to one of `shown` (the
// variant's annotations, which hwimg copies into its labels) are left out as already said:
//   config entrypoint ["/opt/stencil/bin/stencil"], user root (none set), created 2023-11-14T22:13:20Z
//   env HWIMG_VARIANT=cpu-zen4
//   env 1 more: PATH
//   label org.opencontainers.image.source = https://example.org/hwimg/examples/stencil
[[nodiscard]] std::vector<std::string> config_lines(const oci::ImageConfig& config, const oci::Annotations& shown = {});

}  // namespace hwimg::inspect
