#pragma once
// Which tags name a variant of an index, so `inspect` can show the reference the next command
// takes (`oci:out:1.0-cpu-zen4`): a layout's index.json says which digest each tag names; a
// registry's tag list does not, so there a tag counts when it is the one the build gives each
// variant, `TAG-<variant id>` (docs/selection.md#where-the-pairs-are), and the registry lists it.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/image/reader.hpp"

namespace hwimg::inspect {

// How many tags `inspect` asks for: one page of a registry's tag list, so one request.
inline constexpr std::size_t listed_tag_limit = 1000;

// The tags among `listed` that name the manifest `digest` (variant `variant_id` of the index
// tagged `index_tag`), in the listing's order.
[[nodiscard]] std::vector<std::string> variant_tags(std::span<const image::ListedTag> listed, const oci::Digest& digest,
                                                    std::string_view index_tag,
                                                    const std::optional<std::string>& variant_id);

}  // namespace hwimg::inspect
