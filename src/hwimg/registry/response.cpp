// What an exchange answered, as the registry client reads it.

#include "hwimg/registry/detail/http.hpp"
#include "hwimg/util/json_reader.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::registry {
namespace {

std::string first_line(std::string_view text, std::size_t limit) {
  auto line = util::trim(text.substr(0, text.find('\n')));
  if (line.size() > limit) return std::string(line.substr(0, limit)) + "...";
  return std::string(line);
}

// A registry error's `detail` in words: a string as it is, an object's scalar members as
// "tag 1.1, name app" ({"Tag":"1.1","Name":"app"}); anything else (arrays of access scopes, nested
// objects) says nothing a person needs and is left out.
std::string detail_words(const nlohmann::json& detail) {
  if (const auto text = util::json::as_string(detail)) return first_line(*text, 200);
  if (!detail.is_object()) return {};
  std::vector<std::string> words;
  for (const auto& [key, value] : detail.items()) {
    if (const auto text = util::json::as_string(value)) {
      words.push_back(util::to_lower(key) + " " + first_line(*text, 200));
    } else if (value.is_number() || value.is_boolean()) {
      words.push_back(util::to_lower(key) + " " + value.dump());
    }
  }
  return first_line(util::join(words, ", "), 300);
}

}  // namespace

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

std::optional<std::string> Response::header(std::string_view name) const { return util::field_value(headers, name); }

std::vector<std::string> Response::header_values(std::string_view name) const {
  return util::field_values(headers, name);
}

std::string describe(const Response& r) {
  switch (r.failure) {
    case TransportFailure::none: break;
    case TransportFailure::unreachable:
    case TransportFailure::connect: return "connection failed: " + r.error;
    case TransportFailure::tls_handshake: return "TLS handshake failed: " + r.error;
    case TransportFailure::tls_verify:
      return "TLS certificate verification failed: " + r.error + " (use --ca-file for a private CA)";
    case TransportFailure::timeout: return "timed out: " + r.error;
    case TransportFailure::truncated: return "the connection closed before the whole response arrived";
    case TransportFailure::too_large:
    case TransportFailure::cancelled:
    case TransportFailure::other: return r.error;
  }
  auto out = fmt::format("HTTP {}", r.status);
  const auto type = r.header("content-type").value_or("");
  if (type.find("json") != std::string::npos) {
    const auto body = util::json::parse_object(r.body);
    if (body && body->contains("errors") && (*body)["errors"].is_array()) {
      std::vector<std::string> parts;
      for (const auto& e : (*body)["errors"]) {
        if (!e.is_object()) continue;
        // A registry's error fields are read whatever their type: a number where a string belongs
        // is shown as JSON, never thrown (a mirror must survive any answer).
        const auto text_of = [&e](const char* key) {
          if (!e.contains(key) || e[key].is_null()) return std::string();
          return util::json::as_string(e[key]).value_or(first_line(e[key].dump(), 200));
        };
        auto part = text_of("code");
        if (const auto message = text_of("message"); !message.empty()) part += ": " + message;
        if (e.contains("detail")) {
          if (const auto words = detail_words(e["detail"]); !words.empty()) part += " (" + words + ")";
        }
        if (!part.empty()) parts.push_back(std::move(part));
      }
      if (!parts.empty()) return out + " " + util::join(parts, "; ");
    }
  }
  if (!r.body.empty() && type.find("text") != std::string::npos) out += ": " + first_line(r.body, 200);
  return out;
}

std::string describe_status(const Response& r) {
  auto out = fmt::format("HTTP {}", r.status);
  const auto body = util::json::parse_object(r.body);
  if (!body || !body->contains("errors") || !(*body)["errors"].is_array()) return out;
  for (const auto& e : (*body)["errors"]) {
    if (!e.is_object() || !e.contains("code")) continue;
    if (const auto code = util::json::as_string(e["code"])) out += " " + first_line(*code, 100);
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
