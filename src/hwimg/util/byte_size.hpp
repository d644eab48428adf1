#pragma once
// Sizes as people write them on a command line, and as hwimg prints them. Prefixes as ccache and
// `du --si` read them: k, M, G, T are powers of 1000, Ki, Mi, Gi, Ti powers of 1024; a trailing B
// is optional and a bare number is bytes ("20G", "20GB", "512MiB", "0").

#include <cstdint>
#include <string>
#include <string_view>

#include "hwimg/util/error.hpp"

namespace hwimg::util {

[[nodiscard]] Result<std::uint64_t> parse_byte_size(std::string_view text);

// "812 B", "3.4 KiB", "20.0 GiB": binary units, one decimal.
[[nodiscard]] std::string format_byte_size(std::uint64_t bytes);

}  // namespace hwimg::util
