#pragma once
// The requests and responses of `serve`'s HTTP server as plain values, so that the mirror's logic
// is tested without sockets.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwimg/util/error.hpp"
#include "hwimg/util/header_fields.hpp"

namespace hwimg::serve {

using Fields = util::HeaderFields;

struct HttpRequest {
  std::string method;  // "GET", "HEAD", ...
  std::string path;    // URL path, percent-decoded by the server
  Fields query;        // in order
  Fields headers;      // names lower-cased; a repeated header appears once per line

  [[nodiscard]] std::optional<std::string> header(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> header_values(std::string_view name) const;
  [[nodiscard]] std::optional<std::string> query_value(std::string_view name) const;
};

// The next piece of a streamed body; nullopt at its end; an error cuts the connection, so the
// client sees a short body rather than a wrong one.
using BodySource = std::function<Result<std::optional<std::string>>()>;

struct HttpResponse {
  unsigned status = 200;
  Fields headers;
  std::string body;
  BodySource stream;                         // set: the body comes from here instead of `body`
  std::optional<std::uint64_t> stream_size;  // its Content-Length, when known

  [[nodiscard]] std::optional<std::string> header(std::string_view name) const;
};

}  // namespace hwimg::serve
