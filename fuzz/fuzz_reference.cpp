// Image references as users and registries write them: parse_reference and the tag check.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwimg/registry/reference.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto reference = hwimg::registry::parse_reference(text)) {
    // What a reference prints must read back as the same reference.
    const auto again = hwimg::registry::parse_reference(reference->str());
    if (!again || again->str() != reference->str()) __builtin_trap();
    (void)reference->manifest_reference();
    (void)hwimg::registry::is_loopback_host(reference->host());
  }
  (void)hwimg::registry::validate_registry_tag(text);
  return 0;
}
