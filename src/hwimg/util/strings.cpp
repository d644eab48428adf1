#include "hwimg/util/strings.hpp"

#include <algorithm>
#include <cctype>
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

std::optional<std::string> nearest(std::string_view name, std::span<const std::string> candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const auto& candidate : candidates) {
    const auto distance = edit_distance(to_lower(name), to_lower(candidate));
    if (!best || distance < best_distance) {
      best = candidate;
      best_distance = distance;
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
