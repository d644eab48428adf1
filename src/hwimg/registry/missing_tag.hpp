#pragma once
// What to say when a registry has no manifest under a tag: the tags it has instead, nearest to the
// one asked for first, and the command that lists them all (issue 25; docs/commands.md#hwimg-ls),
// rather than the registry's JSON error body; for a repository it does not have, the nearest of
// those its catalogue lists.

#include <span>
#include <string>
#include <string_view>

namespace hwimg::registry {

// "no tag 1.1 in REG/stencil (HTTP 404 MANIFEST_UNKNOWN); it has 1.0, latest (hwimg ls REG/stencil)".
// `status` is the registry's answer in short ("HTTP 404 MANIFEST_UNKNOWN"); at most `shown` tags
// are named, the rest counted; a repository without tags says so.
[[nodiscard]] std::string missing_tag_message(std::string_view tag, std::string_view repository, std::string_view status,
                                              std::span<const std::string> tags, std::size_t shown = 5);

// "no repository REG/stencl (HTTP 404 NAME_UNKNOWN); nearest in REG's catalogue: stencil, app".
// `repositories` is (the first page of) the catalogue; at most `shown` are named.
[[nodiscard]] std::string missing_repository_message(std::string_view registry, std::string_view repository,
                                                     std::string_view status,
                                                     std::span<const std::string> repositories,
                                                     std::size_t shown = 5);

}  // namespace hwimg::registry
