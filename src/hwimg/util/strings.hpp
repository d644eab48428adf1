#pragma once
// Small string helpers shared by the parsers.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hwimg::util {

[[nodiscard]] std::vector<std::string> split(std::string_view text, char separator);
[[nodiscard]] std::string join(std::span<const std::string> parts, std::string_view separator);
// Errors listed at most in one message (a matrix's, a build's variants').
inline constexpr std::size_t max_listed_errors = 20;
// The first `max` parts joined, then "... and N more" for the rest: a list of errors that stays
// readable however long it is.
[[nodiscard]] std::string join_at_most(std::span<const std::string> parts, std::string_view separator, std::size_t max);
// `text` with control characters written as \n, \r, \t or \xNN, so text from the user or a server
// quoted in a one-line message stays on one line.
[[nodiscard]] std::string printable(std::string_view text);
[[nodiscard]] std::string_view trim(std::string_view text);
[[nodiscard]] std::string to_lower(std::string_view text);

// Levenshtein distance, for "did you mean" suggestions.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `name`, if it is close enough to be a plausible typo.
[[nodiscard]] std::optional<std::string> nearest(std::string_view name,
                                                 std::span<const std::string> candidates);

// " (did you mean X?)" or "" — ready to append to an error message.
[[nodiscard]] std::string did_you_mean(std::string_view name, std::span<const std::string> candidates);

// The last `max_lines` lines of `text`, for quoting a failed command's output.
[[nodiscard]] std::string tail_lines(std::string_view text, std::size_t max_lines);

}  // namespace hwimg::util
