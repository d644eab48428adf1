// WWW-Authenticate challenges from registries and the scopes of a bearer challenge.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwimg/registry/detail/challenge.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg::registry;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto& challenge : parse_challenges(text)) {
    const auto scopes = split_scopes(challenge.param("scope"));
    (void)merge_scopes(scopes, split_scopes(text));
  }
  return 0;
}
