#pragma once
// What a registry answered to one exchange, as every part of hwimg reads it: the transport, the
// session, the client's callers and the mirror passing it on.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwimg/util/header_fields.hpp"

namespace hwimg::registry {

// Why an exchange got no complete HTTP response.
enum class TransportFailure {
  none,
  unreachable,   // no connection was made: the name did not resolve, or nothing listens there
  connect,       // reset, dropped, closed without an answer: worth retrying
  tls_handshake, // e.g. a plain-HTTP server on an HTTPS URL
  tls_verify,    // the certificate failed verification
  timeout,
  truncated,     // the connection closed in the middle of the body
  too_large,     // the body exceeded max_response_body
  cancelled,     // ended by a registry::Cancellation (the program stops): never retried
  other,
};

struct Response {
  long status = 0;
  TransportFailure failure = TransportFailure::none;
  std::string error;  // libcurl's explanation when failure != none
  std::string body;
  util::HeaderFields headers;  // names lower-cased
  std::string url;           // where it came from (after redirects)
  bool streamed = false;     // the body follows through Client::next_chunk(), not in `body`

  [[nodiscard]] bool ok() const { return failure == TransportFailure::none; }
  [[nodiscard]] std::optional<std::string> header(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> header_values(std::string_view name) const;
};

// One line explaining a failed exchange: the registry's error codes and messages ("HTTP 404
// BLOB_UNKNOWN: blob unknown to registry"), or the transport failure. Never includes request headers.
[[nodiscard]] std::string describe(const Response& response);
// The status and the registry's error codes alone: "HTTP 404 MANIFEST_UNKNOWN".
[[nodiscard]] std::string describe_status(const Response& response);

}  // namespace hwimg::registry
