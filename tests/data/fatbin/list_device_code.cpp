// Prints the device code hwimg finds in each ELF file named on the command line, one line per
// file: "<file>: sm_80 sm_90 compute_90". The fatbin integration suite builds it against
// libhwimg_core.a and compares its answer with what nvcc was asked for (and with cuobjdump).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "hwimg/hw/fatbin.hpp"

int main(int argc, char** argv) {
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    const std::vector<char> chars{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (!in.eof() && in.fail()) {
      fmt::print(stderr, "cannot read {}\n", argv[i]);
      status = 1;
      continue;
    }
    const auto bytes = std::as_bytes(std::span(chars));
    const auto names = hwimg::hw::list_device_code(bytes, argv[i]);
    if (!names) {
      fmt::print(stderr, "{}\n", names.error().message);
      status = 1;
      continue;
    }
    fmt::print("{}:{}{}\n", argv[i], names->empty() ? "" : " ", fmt::join(*names, " "));
  }
  return status;
}
