#include "hwimg/registry/missing_tag.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "hwimg/util/strings.hpp"

namespace hwimg::registry {

std::string missing_tag_message(std::string_view tag, std::string_view repository, std::string_view status,
                                std::span<const std::string> tags, std::size_t shown) {
  if (tags.empty()) {
    return fmt::format("no tag {} in {} ({}); the repository has no tags", tag, repository, status);
  }
  std::vector<std::string> nearest(tags.begin(), tags.end());
  std::ranges::stable_sort(nearest, {}, [&](const std::string& candidate) { return util::edit_distance(tag, candidate); });
  const auto listed = std::min(shown, nearest.size());
  nearest.resize(listed);
  const auto more = tags.size() - listed;
  return fmt::format("no tag {} in {} ({}); it has {}{} (hwimg ls {})", tag, repository, status,
                     util::join(nearest, ", "), more == 0 ? std::string() : fmt::format(" and {} more", more),
                     repository);
}

}  // namespace hwimg::registry
