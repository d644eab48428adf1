// Matrix YAML: axes, include/exclude cells and the names checked against the hardware tables.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwimg/matrix/matrix_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)hwimg::matrix::parse_matrix_text(text, "/fuzz/matrix.yaml");
  return 0;
}
