#include "hwimg/util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <numeric>

#include <fmt/format.h>

namespace hwimg::util {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) {
      return parts;
    }
    start = end + 1;
  }
}

std::string join(std::span<const std::string> parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) {
      out += separator;
    }
    out += parts[i];
  }
  return out;
}

std::string_view trim(std::string_view text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && is_space(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(),
                         [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

namespace {

// How alike two names of equal edit distance look: the longer their common start, the closer, and
// where both go on with a digit, the nearer the two digits. Names of one family differ in a number
// at the end: x86-64-v5 is meant as x86-64-v4, sm_91 as sm_90, zen6 as zen5, rather than as the
// first equally distant name in the list (x86-64-v1, sm_61, zen).
struct Likeness {
  std::size_t common_prefix = 0;
  int gap = 0;

  bool operator<(const Likeness& other) const {
    if (common_prefix != other.common_prefix) return common_prefix > other.common_prefix;
    return gap < other.gap;
  }
};

Likeness likeness(std::string_view a, std::string_view b) {
  const auto [end_a, end_b] = std::ranges::mismatch(a, b);
  Likeness result{static_cast<std::size_t>(end_a - a.begin()), 0};
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  if (end_a == a.end() || end_b == b.end()) {
    result.gap = 11;  // one name ends: after any other digit
  } else if (is_digit(*end_a) && is_digit(*end_b)) {
    result.gap = std::abs(*end_a - *end_b);
  } else {
    result.gap = 10;  // letters have no order that says which typo is likelier: the list decides
  }
  return result;
}

}  // namespace

std::optional<std::string> nearest(std::string_view name, std::span<const std::string> candidates) {
  const auto lower_name = to_lower(name);
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  Likeness best_likeness;
  for (const auto& candidate : candidates) {
    const auto lower_candidate = to_lower(candidate);
    const auto distance = edit_distance(lower_name, lower_candidate);
    const auto alike = likeness(lower_name, lower_candidate);
    if (!best || distance < best_distance || (distance == best_distance && alike < best_likeness)) {
      best = candidate;
      best_distance = distance;
      best_likeness = alike;
    }
  }
  // Beyond a third of the name's length the suggestion is noise rather than a typo fix.
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  if (best && best_distance <= limit) {
    return best;
  }
  return std::nullopt;
}

std::string did_you_mean(std::string_view name, std::span<const std::string> candidates) {
  if (const auto suggestion = nearest(name, candidates)) {
    return " (did you mean " + *suggestion + "?)";
  }
  return {};
}

std::string tail_lines(std::string_view text, std::size_t max_lines) {
  while (!text.empty() && text.back() == '\n') {
    text.remove_suffix(1);
  }
  std::size_t pos = text.size();
  for (std::size_t lines = 0; lines < max_lines && pos != 0; ++lines) {
    const auto newline = text.rfind('\n', pos - 1);
    pos = newline == std::string_view::npos ? 0 : newline;
  }
  auto tail = text.substr(pos);
  if (!tail.empty() && tail.front() == '\n') {
    tail.remove_prefix(1);
  }
  return std::string(tail);
}

std::string join_at_most(std::span<const std::string> parts, std::string_view separator, std::size_t max) {
  if (parts.size() <= max) return join(parts, separator);
  return join(parts.first(max), separator) + std::string(separator) +
         fmt::format("... and {} more", parts.size() - max);
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (byte < 0x20 || byte == 0x7f) out += fmt::format("\\x{:02x}", byte);
    else out += c;
  }
  return out;
}

}  // namespace hwimg::util
