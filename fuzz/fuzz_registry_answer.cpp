// Bodies a registry or its token service sends back: a token answer and a JSON error body, read
// whatever the types and sizes of their fields (issue 23, F1 and I1).
#include <cstddef>
#include <cstdint>
#include <string>

#include "hwimg/registry/detail/session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg::registry;
  const std::string body(reinterpret_cast<const char*>(data), size);
  if (const auto token = parse_token_answer(body)) {
    if (token->token.empty() || token->lifetime < std::chrono::seconds(60) || token->lifetime > std::chrono::hours(24)) {
      __builtin_trap();
    }
  }
  Response response;
  response.status = 400;
  response.headers.emplace_back("content-type", "application/json");
  response.body = body;
  (void)describe(response);
  return 0;
}
