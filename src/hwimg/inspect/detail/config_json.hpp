#pragma once
// The JSON form of a variant's image config in `inspect --format json`; included only from .cpp
// files (nlohmann/json).

#include <nlohmann/json.hpp>

#include "hwimg/oci/documents.hpp"

namespace hwimg::inspect::detail {

// {"created", "entrypoint", "cmd", "workingDir", "user", "env", "labels"}, null where the config
// has none; the environment whole.
[[nodiscard]] nlohmann::json config_json(const oci::ImageConfig& config);

}  // namespace hwimg::inspect::detail
