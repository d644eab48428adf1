// tags/list pagination: the next page from `Link` headers, resolved against the request's URL.
// Input: header values, one per line.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwimg/registry/detail/http.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg::registry;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Response response;
  response.url = "https://registry.example.org:5000/v2/team/app/tags/list?n=1000";
  while (!text.empty()) {
    const auto end = text.find('\n');
    response.headers.emplace_back("link", std::string(text.substr(0, end)));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  if (const auto next = next_page_link(response); !next.empty()) {
    (void)redact_url(resolve_url(response.url, next));
    (void)resolve_url("http://127.0.0.1:5000", next);
  }
  return 0;
}
