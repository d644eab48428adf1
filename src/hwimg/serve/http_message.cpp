#include "hwimg/serve/http_message.hpp"

#include "hwimg/util/strings.hpp"

namespace hwimg::serve {
namespace {

std::optional<std::string> find_field(const Fields& fields, std::string_view name) {
  for (const auto& [key, value] : fields) {
    if (key == name) return value;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> HttpRequest::header(std::string_view name) const { return util::field_value(headers, name); }

std::vector<std::string> HttpRequest::header_values(std::string_view name) const {
  return util::field_values(headers, name);
}

std::optional<std::string> HttpRequest::query_value(std::string_view name) const {
  return find_field(query, name);
}

std::optional<std::string> HttpResponse::header(std::string_view name) const {
  return util::field_value(headers, name);
}

}  // namespace hwimg::serve
