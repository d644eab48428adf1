// The fatbin integration suite builds this against libhwimg_core.a.
//   list_device_code FILE...                   one line per file: "<file>: sm_80 compute_80 sm_90a"
//   list_device_code --check ID TARGETS DIR    the builder's check of a variant's files against its
//                                              declared targets (comma list); exit 1 on mismatch
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hwimg/hw/fatbin.hpp"
#include "hwimg/hw/fatbin_check.hpp"
#include "hwimg/util/strings.hpp"

namespace {

int check(const char* id, const char* declared_list, const char* directory) {
  std::vector<hwimg::hw::GpuTarget> declared;
  for (const auto& name : hwimg::util::split(declared_list, ',')) {
    const auto target = hwimg::hw::parse_gpu_target(name);
    if (!target) {
      fmt::print(stderr, "{}\n", target.error().message);
      return 2;
    }
    declared.push_back(*target);
  }
  const auto scan = hwimg::hw::scan_device_code(directory);
  if (!scan) {
    fmt::print(stderr, "{}\n", scan.error().message);
    return 1;
  }
  if (const auto checked = hwimg::hw::check_device_code(id, declared, scan->targets); !checked) {
    fmt::print(stderr, "{}\n", checked.error().message);
    return 1;
  }
  fmt::print("{}: {}\n", id, hwimg::hw::join_target_names(scan->targets));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--check") == 0) {
    return check(argv[2], argv[3], argv[4]);
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    const std::vector<char> chars{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (!in.eof() && in.fail()) {
      fmt::print(stderr, "cannot read {}\n", argv[i]);
      status = 1;
      continue;
    }
    const auto names = hwimg::hw::list_device_code(std::as_bytes(std::span(chars)), argv[i]);
    if (!names) {
      fmt::print(stderr, "{}\n", names.error().message);
      status = 1;
      continue;
    }
    fmt::print("{}:{}{}\n", argv[i], names->empty() ? "" : " ", fmt::join(*names, " "));
  }
  return status;
}
