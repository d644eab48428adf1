#include "hwimg/util/header_fields.hpp"

#include <algorithm>

namespace hwimg::util {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) { return lower(x) == lower(y); });
}

}  // namespace

std::optional<std::string> field_value(const HeaderFields& fields, std::string_view name) {
  for (const auto& [key, value] : fields) {
    if (same_name(key, name)) return value;
  }
  return std::nullopt;
}

std::vector<std::string> field_values(const HeaderFields& fields, std::string_view name) {
  std::vector<std::string> out;
  for (const auto& [key, value] : fields) {
    if (same_name(key, name)) out.push_back(value);
  }
  return out;
}

}  // namespace hwimg::util
