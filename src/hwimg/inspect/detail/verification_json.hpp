#pragma once
// The JSON form of `inspect --verify`; included only from .cpp files (nlohmann/json).

#include <vector>

#include <nlohmann/json.hpp>

#include "hwimg/verify/image_verify.hpp"

namespace hwimg::inspect::detail {

[[nodiscard]] nlohmann::json verification_json(const std::vector<verify::VariantVerification>& variants);

}  // namespace hwimg::inspect::detail
