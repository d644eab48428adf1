#pragma once
// Durations as people write them on a command line: "500ms", "60s", "10m", "1h", "7d" (a bare number
// is seconds).

#include <chrono>
#include <string_view>

#include "hwimg/util/error.hpp"

namespace hwimg::util {

[[nodiscard]] Result<std::chrono::milliseconds> parse_duration(std::string_view text);

}  // namespace hwimg::util
