#pragma once
// When and how soon a registry exchange is tried again: transient failures, Retry-After (seconds
// or an HTTP-date), backoff with jitter, and the registry error codes a push recovers from.
// Internal to hwimg::registry.

#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/registry/detail/http.hpp"

namespace hwimg::registry {

// The longest wait a Retry-After may ask for; a longer one is cut to this.
inline constexpr std::chrono::seconds max_retry_after{60};

// True for answers worth retrying: connection failures, 408, 429 and 5xx.
[[nodiscard]] bool is_transient(const Response& response);

// Attempts at most for a registry on this machine that nothing answers on (connection refused):
// one. On loopback a refusal is an answer, not a network's hiccup (a wrong port, a registry not
// started), so it is reported at once instead of after the backoff meant for networks.
inline constexpr unsigned max_attempts_unreachable_loopback = 1;

// A Retry-After value as a wait from `now`: delay-seconds or an HTTP-date in any of the three
// forms RFC 9110 §5.6.7 makes recipients accept (a date in the past waits 0 s); nullopt when it
// is neither. Not capped.
[[nodiscard]] std::optional<std::chrono::seconds> parse_retry_after(std::string_view value,
                                                                    std::chrono::system_clock::time_point now);

// Delay before retry number `attempt` (0-based): Retry-After when the server sent one (capped at
// max_retry_after), else 200 ms doubling up to 10 s, with up to 50 % random jitter added.
[[nodiscard]] std::chrono::milliseconds backoff_delay(const Response& response, unsigned attempt, std::mt19937& random,
                                                      std::chrono::system_clock::time_point now =
                                                          std::chrono::system_clock::now());

// The line a person waiting is shown before retry number `attempt` (0-based) of `attempts`:
// "127.0.0.2:5000 refused the connection; retrying in 0.2 s (2/8)".
[[nodiscard]] std::string retry_notice(const Response& response, unsigned attempt, unsigned attempts,
                                       std::chrono::milliseconds delay);

// The `code` of each entry of a registry's JSON error body ({"errors": [{"code": ...}]}).
[[nodiscard]] std::vector<std::string> error_codes(const Response& response);

// A manifest PUT refused because the registry does not see one of the blobs it references
// (MANIFEST_BLOB_UNKNOWN): re-check the blobs, upload what is missing and put it again.
[[nodiscard]] bool manifest_blob_unknown(const Response& response);

// A blob upload that is worth starting over from its HEAD: the upload session was lost
// (BLOB_UPLOAD_UNKNOWN, BLOB_UPLOAD_INVALID), or the registry refused bytes that hashed right
// on the way out (DIGEST_INVALID).
[[nodiscard]] bool upload_restartable(const Response& response);

}  // namespace hwimg::registry
