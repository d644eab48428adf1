// What an exchange answered, as the registry client reads it.

#include "hwimg/registry/detail/http.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::registry {

std::string_view method_name(Method method) {
  switch (method) {
    case Method::get: return "GET";
    case Method::head: return "HEAD";
    case Method::post: return "POST";
    case Method::put: return "PUT";
    case Method::patch: return "PATCH";
    case Method::del: return "DELETE";
  }
  return "GET";
}

std::optional<std::string> Response::header(std::string_view name) const {
  const auto lower = util::to_lower(name);
  for (const auto& [key, value] : headers) {
    if (key == lower) return value;
  }
  return std::nullopt;
}

std::vector<std::string> Response::header_values(std::string_view name) const {
  const auto lower = util::to_lower(name);
  std::vector<std::string> out;
  for (const auto& [key, value] : headers) {
    if (key == lower) out.push_back(value);
  }
  return out;
}

std::string next_page_link(const Response& r) {
  for (const auto& value : r.header_values("link")) {
    for (const auto& link : util::split(value, ',')) {
      const auto open = link.find('<');
      const auto close = link.find('>');
      if (open == std::string::npos || close == std::string::npos || close < open) continue;
      if (link.find("rel=\"next\"", close) != std::string::npos || link.find("rel=next", close) != std::string::npos) {
        return link.substr(open + 1, close - open - 1);
      }
    }
  }
  return {};
}

std::string too_large_error(long status, std::size_t limit) {
  if (status >= 200 && status <= 299) return fmt::format("answer larger than {} bytes", limit);
  return fmt::format("HTTP {} with an answer larger than {} bytes", status, limit);
}

}  // namespace hwimg::registry
