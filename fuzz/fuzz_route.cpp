// `serve` request routing: the path and the `ns` query value of a mirror request.
// Input: the path, then optionally a line with the ns value.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/serve/route.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto newline = text.find('\n');
  const auto path = text.substr(0, newline);
  std::optional<std::string> ns;
  if (newline != std::string_view::npos) ns = std::string(text.substr(newline + 1));
  static const std::vector<std::string> upstreams{"registry.example.org", "127.0.0.1:5000", "docker.io", "mirror"};
  if (const auto route = hwimg::serve::parse_route(path, ns, upstreams)) (void)route->by_digest();
  return 0;
}
