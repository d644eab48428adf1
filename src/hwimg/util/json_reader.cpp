#include "hwimg/util/json_reader.hpp"

#include <algorithm>

namespace hwimg::util::json {

Result<Json> parse(std::string_view text) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number overflowing a double
    std::string_view what = e.what();
    if (const auto end = what.find("] "); what.starts_with("[json.exception") && end != std::string_view::npos) {
      what.remove_prefix(end + 2);
    }
    return fail("invalid JSON: {}", what);
  }
}

std::optional<Json> parse_object(std::string_view text) {
  auto value = Json::parse(text, nullptr, false);
  if (!value.is_object()) return std::nullopt;
  return value;
}

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::string: return "a string";
    case Kind::integer: return "an integer";
    case Kind::non_negative_integer: return "a non-negative integer";
    case Kind::object: return "an object";
    case Kind::array: return "an array";
    case Kind::array_of_strings: return "an array of strings";
  }
  return "a value";
}

Result<const Json*> member(const Json& object, std::string_view key, Kind kind) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  const auto& value = *it;
  bool matches = false;
  switch (kind) {
    case Kind::string: matches = value.is_string(); break;
    case Kind::integer: matches = value.is_number_integer(); break;
    case Kind::non_negative_integer: matches = value.is_number_integer() && value.get<std::int64_t>() >= 0; break;
    case Kind::object: matches = value.is_object(); break;
    case Kind::array: matches = value.is_array(); break;
    case Kind::array_of_strings:
      matches = value.is_array() && std::ranges::all_of(value, [](const Json& item) { return item.is_string(); });
      break;
  }
  if (!matches) return fail("expected {}", kind_name(kind));
  return &value;
}

Result<std::optional<std::string>> string_member(const Json& object, std::string_view key) {
  HWIMG_TRY_ASSIGN(const auto* value, member(object, key, Kind::string));
  if (value == nullptr) return std::nullopt;
  return value->get<std::string>();
}

Result<std::optional<std::int64_t>> integer_member(const Json& object, std::string_view key) {
  HWIMG_TRY_ASSIGN(const auto* value, member(object, key, Kind::integer));
  if (value == nullptr) return std::nullopt;
  return value->get<std::int64_t>();
}

Result<std::optional<std::vector<std::string>>> strings_member(const Json& object, std::string_view key) {
  HWIMG_TRY_ASSIGN(const auto* value, member(object, key, Kind::array_of_strings));
  if (value == nullptr) return std::nullopt;
  return value->get<std::vector<std::string>>();
}

std::optional<std::string> as_string(const Json& value) {
  if (!value.is_string()) return std::nullopt;
  return value.get<std::string>();
}

std::optional<std::int64_t> as_integer(const Json& value) {
  // An unsigned above INT64_MAX is no integer hwimg can take.
  if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<std::uint64_t>() > INT64_MAX)) {
    return std::nullopt;
  }
  return value.get<std::int64_t>();
}

std::optional<bool> as_boolean(const Json& value) {
  if (!value.is_boolean()) return std::nullopt;
  return value.get<bool>();
}

}  // namespace hwimg::util::json
