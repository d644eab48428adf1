// The fatbin integration suite builds this against libhwimg_core.a.
//   list_device_code FILE...                   one line per file: "<file>: sm_80 compute_80 sm_90a",
//                                              the targets every module of the file has
//   list_device_code --modules FILE            one line per module: "<where>: sm_80 sm_90"
//   list_device_code --check ID TARGETS DIR    the builder's check of a variant's files against its
//                                              declared targets (comma list); exit 1 on mismatch
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hwimg/hw/device_code.hpp"
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
  if (const auto checked = hwimg::hw::check_device_code(id, declared, *scan); !checked) {
    fmt::print(stderr, "{}\n", checked.error().message);
    return 1;
  }
  fmt::print("{}: {}\n", id, hwimg::hw::join_target_names(scan->common_targets()));
  return 0;
}

hwimg::Result<hwimg::hw::FileDeviceCode> read_code(const char* path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!in.eof() && in.fail()) {
    return hwimg::fail("cannot read {}", path);
  }
  const auto bytes = std::as_bytes(std::span(chars));
  return hwimg::hw::read_device_code(bytes, hwimg::hw::device_file_kind(bytes, path), path);
}

std::vector<std::string> names(std::span<const hwimg::hw::GpuTarget> targets) {
  std::vector<std::string> result;
  for (const auto& target : targets) {
    result.push_back(target.name());
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--check") == 0) {
    return check(argv[2], argv[3], argv[4]);
  }
  if (argc == 3 && std::strcmp(argv[1], "--modules") == 0) {
    const auto code = read_code(argv[2]);
    if (!code) {
      fmt::print(stderr, "{}\n", code.error().message);
      return 1;
    }
    for (const auto& module : code->modules) {
      fmt::print("{}: {}\n", module.where, fmt::join(names(module.targets), " "));
    }
    return 0;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    const auto code = read_code(argv[i]);
    if (!code) {
      fmt::print(stderr, "{}\n", code.error().message);
      status = 1;
      continue;
    }
    const auto common = names(hwimg::hw::common_targets(code->modules));
    fmt::print("{}:{}{}\n", argv[i], common.empty() ? "" : " ", fmt::join(common, " "));
  }
  return status;
}
