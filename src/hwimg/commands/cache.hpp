#pragma once
// `hwimg cache ls|prune`, and the cap every build applies to the cache when it is done
// (docs/cache.md).

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "hwimg/commands/data_format.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::commands {

struct CacheArguments {
  std::filesystem::path cache;              // --cache; empty: $XDG_CACHE_HOME/hwimg or ~/.cache/hwimg
  std::optional<std::string> max_size;      // prune --max-size SIZE
  std::optional<std::string> older_than;    // prune --older-than DURATION
  DataFormat format = DataFormat::text;
};

// One line per entry, least recently used first, then the total and the cap.
[[nodiscard]] Result<int> run_cache_ls(const CacheArguments& arguments);

// Removes what is not in use and not used for --older-than, then least recently used entries
// until the cache fits --max-size; neither given: the cap (HWIMG_CACHE_MAX_SIZE, else the default).
[[nodiscard]] Result<int> run_cache_prune(const CacheArguments& arguments);

// The cap after a build: `flag` (--cache-max-size), else HWIMG_CACHE_MAX_SIZE, else the default;
// nullopt when it is "off".
[[nodiscard]] Result<std::optional<std::uint64_t>> cache_cap(const std::filesystem::path& root,
                                                            const std::optional<std::string>& flag);

// Prunes `root` to `cap` without waiting for another prune; reports what went on `output`.
void apply_cache_cap(const std::filesystem::path& root, std::uint64_t cap, util::Output& output);

}  // namespace hwimg::commands
