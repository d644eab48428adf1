#pragma once
// A layer blob's tar, whatever its compression: the bytes a diff_id is the digest of.

#include <filesystem>
#include <functional>
#include <string_view>

#include "hwimg/util/error.hpp"

namespace hwimg::image {

// Hands the uncompressed bytes of `blob` (a tar, or one compressed with gzip or zstd) to `sink`, in
// pieces of at most 1 MiB; `name` names the blob in errors.
[[nodiscard]] Result<void> read_uncompressed_blob(const std::filesystem::path& blob, std::string_view name,
                                                  const std::function<Result<void>(std::string_view)>& sink);

}  // namespace hwimg::image
