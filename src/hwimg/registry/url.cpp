#include "hwimg/registry/detail/url.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "hwimg/util/strings.hpp"

namespace hwimg::registry {
std::string url_authority(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {};
  const auto authority_end = url.find_first_of("/?#", scheme_end + 3);
  auto authority = util::to_lower(url.substr(scheme_end + 3, authority_end - scheme_end - 3));
  if (const auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  return authority;
}

std::string url_origin(std::string_view url) {
  auto authority = url_authority(url);
  if (authority.empty()) return {};
  const auto scheme = util::to_lower(url.substr(0, url.find("://")));
  // The default port is the same origin written either way.
  const std::string_view default_port = scheme == "https" ? ":443" : scheme == "http" ? ":80" : "";
  if (!default_port.empty() && authority.ends_with(default_port)) authority.resize(authority.size() - default_port.size());
  return scheme + "://" + authority;
}

bool same_origin(std::string_view a, std::string_view b) {
  const auto origin = url_origin(a);
  return !origin.empty() && origin == url_origin(b);
}

std::string url_host(std::string_view url) {
  const auto authority = url_authority(url);
  if (authority.starts_with('[')) return authority.substr(1, authority.find(']') - 1);
  return authority.substr(0, authority.find(':'));
}

void strip_authorization(std::vector<std::string>& headers) {
  std::erase_if(headers, [](const std::string& h) { return util::to_lower(h).starts_with("authorization:"); });
}

namespace {

// Query keys whose values grant access: upload state, tokens, passwords, and the signatures and
// credentials of pre-signed blob storage URLs (S3's X-Amz-*, Google's X-Goog-*, Azure's sig),
// matched in any letter case, as the services themselves accept them.
bool secret_key(std::string_view key) {
  const auto lower = util::to_lower(key);
  return lower == "_state" || lower == "sig" || lower == "password" || lower.starts_with("x-amz-") ||
         lower.starts_with("x-goog-") || lower.find("token") != std::string::npos ||
         lower.find("signature") != std::string::npos || lower.find("credential") != std::string::npos;
}

}  // namespace

std::string redact_url(std::string_view url) {
  std::string out;
  // user:password@ in the authority is dropped whole.
  const auto scheme_end = url.find("://");
  if (scheme_end != std::string_view::npos) {
    const auto authority_start = scheme_end + 3;
    const auto authority_end = std::min(url.find_first_of("/?#", authority_start), url.size());
    const auto at = url.substr(0, authority_end).rfind('@');
    if (at != std::string_view::npos && at >= authority_start) {
      out = std::string(url.substr(0, authority_start)) + "REDACTED@";
      url.remove_prefix(at + 1);
    }
  }
  const auto query = url.find('?');
  if (query == std::string_view::npos) return out + std::string(url);
  out += url.substr(0, query + 1);
  bool first = true;
  for (const auto& pair : util::split(url.substr(query + 1), '&')) {
    if (!first) out += '&';
    first = false;
    const auto eq = pair.find('=');
    out += eq != std::string::npos && secret_key(pair.substr(0, eq)) ? pair.substr(0, eq) + "=REDACTED" : pair;
  }
  return out;
}

std::string resolve_url(std::string_view base, std::string_view reference) {
  if (reference.starts_with("http://") || reference.starts_with("https://")) return std::string(reference);
  const auto scheme_end = base.find("://");
  const auto authority_end = base.find('/', scheme_end == std::string_view::npos ? 0 : scheme_end + 3);
  const auto origin = base.substr(0, authority_end);
  if (reference.starts_with("//")) return std::string(base.substr(0, scheme_end + 1)) + std::string(reference);
  if (reference.starts_with('/')) return std::string(origin) + std::string(reference);
  auto path = authority_end == std::string_view::npos ? std::string_view("/") : base.substr(authority_end);
  path = path.substr(0, path.find('?'));
  return std::string(origin) + std::string(path.substr(0, path.rfind('/') + 1)) + std::string(reference);
}

std::string url_encode(std::string_view value) {
  std::string out;
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

}  // namespace hwimg::registry
