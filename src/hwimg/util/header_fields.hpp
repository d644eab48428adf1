#pragma once
// HTTP header fields as one type for every part of hwimg that holds them: a registry's answers
// (registry::Response) and serve's requests and responses (serve::HttpRequest, HttpResponse).
// Field names are matched without regard to case (RFC 9110 §5.1).

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hwimg::util {

// Name and value per field line, in the order they came; a repeated field once per line.
using HeaderFields = std::vector<std::pair<std::string, std::string>>;

// The first value of the field `name`; nullopt when there is none.
[[nodiscard]] std::optional<std::string> field_value(const HeaderFields& fields, std::string_view name);
// Every value of the field `name`, in order.
[[nodiscard]] std::vector<std::string> field_values(const HeaderFields& fields, std::string_view name);

}  // namespace hwimg::util
