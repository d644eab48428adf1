// Recipe YAML: syntax, keys, types and positions for file:line:column errors.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwimg/recipe/recipe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)hwimg::recipe::parse_recipe(text, "/fuzz/recipe.yaml");
  return 0;
}
