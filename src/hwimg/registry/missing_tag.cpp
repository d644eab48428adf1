#include "hwimg/registry/missing_tag.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "hwimg/util/strings.hpp"

namespace hwimg::registry {

namespace {

// The names nearest to `wanted` first (edit distance; ties keep the given order), at most `shown`.
std::vector<std::string> nearest_names(std::string_view wanted, std::span<const std::string> names, std::size_t shown) {
  std::vector<std::string> nearest(names.begin(), names.end());
  std::ranges::stable_sort(nearest, {}, [&](const std::string& candidate) { return util::edit_distance(wanted, candidate); });
  nearest.resize(std::min(shown, nearest.size()));
  return nearest;
}

}  // namespace

std::string missing_tag_message(std::string_view tag, std::string_view repository, std::string_view status,
                                std::span<const std::string> tags, std::size_t shown) {
  if (tags.empty()) {
    return fmt::format("no tag {} in {} ({}); the repository has no tags", tag, repository, status);
  }
  const auto nearest = nearest_names(tag, tags, shown);
  const auto more = tags.size() - nearest.size();
  return fmt::format("no tag {} in {} ({}); it has {}{} (hwimg ls {})", tag, repository, status,
                     util::join(nearest, ", "), more == 0 ? std::string() : fmt::format(" and {} more", more),
                     repository);
}

std::string missing_repository_message(std::string_view registry, std::string_view repository, std::string_view status,
                                       std::span<const std::string> repositories, std::size_t shown) {
  if (repositories.empty()) {
    return fmt::format("no repository {}/{} ({}); {}'s catalogue lists none", registry, repository, status, registry);
  }
  const auto nearest = nearest_names(repository, repositories, shown);
  return fmt::format("no repository {}/{} ({}); nearest in {}'s catalogue: {}", registry, repository, status, registry,
                     util::join(nearest, ", "));
}

}  // namespace hwimg::registry
