// Docker's substitution of build arguments in a Dockerfile's text (docs/recipe.md#bring-your-dockerfile):
// hwimg needs it only for FROM lines, to resolve the images a variant starts from before buildah runs.
#include <cctype>

#include "hwimg/recipe/dockerfile.hpp"

namespace hwimg::recipe {
namespace {

bool is_name_character(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::string value_of(const ArgValues& values, const std::string& name) {
  const auto found = values.find(name);
  return found == values.end() ? std::string() : found->second;
}

}  // namespace

Result<std::string> expand_arguments(std::string_view text, const ArgValues& values, char escape, std::string_view where) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == escape && i + 1 < text.size() && text[i + 1] == '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (c != '$' || i + 1 == text.size()) {
      out += c;
      ++i;
      continue;
    }
    if (text[i + 1] == '{') {
      const auto close = text.find('}', i + 2);
      if (close == std::string_view::npos) {
        return fail("{}unterminated \"${{\" in \"{}\" (expected ${{NAME}})", where.empty() ? "" : std::string(where) + ": ",
                    text);
      }
      const auto inner = text.substr(i + 2, close - i - 2);
      const auto colon = inner.find(':');
      const std::string name(inner.substr(0, colon));
      const auto value = value_of(values, name);
      if (colon == std::string_view::npos || colon + 1 >= inner.size()) {
        out += value;
      } else if (inner[colon + 1] == '-') {
        out += value.empty() ? std::string(inner.substr(colon + 2)) : value;
      } else if (inner[colon + 1] == '+') {
        out += value.empty() ? std::string() : std::string(inner.substr(colon + 2));
      } else {
        return fail("{}expected ${{{}:-WORD}} or ${{{}:+WORD}} in \"{}\"", where.empty() ? "" : std::string(where) + ": ",
                    name, name, text);
      }
      i = close + 1;
      continue;
    }
    std::size_t end = i + 1;
    while (end < text.size() && is_name_character(text[end])) ++end;
    if (end == i + 1) {
      out += c;
      ++i;
      continue;
    }
    out += value_of(values, std::string(text.substr(i + 1, end - i - 1)));
    i = end;
  }
  return out;
}

}  // namespace hwimg::recipe
