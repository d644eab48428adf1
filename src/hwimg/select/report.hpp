#pragma once
// What `hwimg select` prints (docs/selection.md#select-output): the reference line, the JSON object,
// and the --explain table of every variant.

#include <string>

#include "hwimg/select/image_source.hpp"
#include "hwimg/select/selector.hpp"

namespace hwimg::select {

// The reference of the chosen variant; empty when nothing fits.
[[nodiscard]] std::string chosen_reference(const ImageSource& source, const Selection& selection);

// {"reference", "digest", "variant", "candidates": [...]}, with nulls when nothing fits; ends in a newline.
[[nodiscard]] std::string render_json(const ImageSource& source, const Selection& selection);

// `hwimg check`'s line when the image runs here: "REF runs on this host: WHY", and for an index the
// variant that would be selected, "REF runs on this host as variant ID (VARIANT-REF): WHY".
// `host` names what was judged: "this host", or "the host in FILE" for a facts file (--host).
[[nodiscard]] std::string render_check(const ImageSource& source, const Selection& selection,
                                       std::string_view host = "this host");

// The host line, the image line and, when some variant runs here, what the ranks mean; then one
// row per variant: chosen with why it fits, compatible with its rank, why it fits and why it ranks
// below the chosen one, or rejected with every reason on lines of their own.
[[nodiscard]] std::string render_explanation(const ImageSource& source, const Selection& selection);
// The same for an image named `image` ("registry/repo:tag").
[[nodiscard]] std::string render_explanation(std::string_view image, const Selection& selection);

}  // namespace hwimg::select
