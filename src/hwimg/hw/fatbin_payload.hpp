#pragma once
// Fatbin entry payloads: nvcc compresses PTX by default and every entry with -compress-all, with
// zstd (flag 0x8000) or a raw LZ4 block (flag 0x2000) (docs/compatibility.md#fatbin-compression).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::hw {

enum class PayloadCompression { none, zstd, lz4 };

// The payload's `uncompressed_size` bytes from its first `compressed_size` bytes; `name` and
// `offset` (of the entry) go into errors.
[[nodiscard]] Result<std::vector<std::byte>> decompress_payload(std::span<const std::byte> compressed,
                                                                PayloadCompression compression,
                                                                std::uint64_t uncompressed_size, std::string_view name,
                                                                std::uint64_t offset);

}  // namespace hwimg::hw
