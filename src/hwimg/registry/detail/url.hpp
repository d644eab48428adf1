#pragma once
// URLs as the transport and the session handle them: origins (where credentials may go), relative
// references from Location and Link headers, query encoding, and redaction for logs.

#include <string>
#include <string_view>
#include <vector>

namespace hwimg::registry {

// "scheme://host[:port]" of an absolute URL, lower-cased, without a default port or user info;
// empty for a relative one.
[[nodiscard]] std::string url_origin(std::string_view url);
// Whether two absolute URLs share scheme, host and port: credentials go only where they came from.
[[nodiscard]] bool same_origin(std::string_view a, std::string_view b);
// "host[:port]" of an absolute URL, lower-cased, without user info; empty for a relative one.
[[nodiscard]] std::string url_authority(std::string_view url);
// The host of an absolute URL, lower-cased, without port, user info or IPv6 brackets.
[[nodiscard]] std::string url_host(std::string_view url);
// Removes every Authorization header (a request about to go to another origin).
void strip_authorization(std::vector<std::string>& headers);

// The URL with upload-state and token query values hidden, for logs and errors.
[[nodiscard]] std::string redact_url(std::string_view url);

// `reference` resolved against `base` (absolute URL, absolute path, or relative path).
[[nodiscard]] std::string resolve_url(std::string_view base, std::string_view reference);

// Percent-encodes a query value (RFC 3986 unreserved characters kept).
[[nodiscard]] std::string url_encode(std::string_view value);

}  // namespace hwimg::registry
