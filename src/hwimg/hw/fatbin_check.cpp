#include "hwimg/hw/fatbin_check.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "hwimg/hw/elf.hpp"
#include "hwimg/hw/fatbin.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::hw {

namespace {

bool starts_with_elf_magic(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 4> magic{};
  in.read(magic.data(), magic.size());
  return in.gcount() == 4 && is_elf(std::as_bytes(std::span(magic)));
}

Result<void> scan_file(const std::filesystem::path& path, DeviceCodeScan& scan) {
  if (!starts_with_elf_magic(path)) {
    return {};
  }
  HWIMG_TRY_ASSIGN(const auto bytes, util::read_file(path));
  HWIMG_TRY_ASSIGN(const auto targets, list_device_targets(std::as_bytes(std::span(bytes)), path.string()));
  if (!targets.empty()) {
    scan.files.push_back(path);
    std::ranges::copy(targets, std::back_inserter(scan.targets));
  }
  return {};
}

std::string names_or_none(std::span<const GpuTarget> targets) {
  if (targets.empty()) {
    return "no device code";
  }
  std::vector<std::string> names;
  for (const auto& target : targets) {
    names.push_back(target.name());
  }
  return util::join(names, ", ");
}

}  // namespace

Result<DeviceCodeScan> scan_device_code(const std::filesystem::path& root) {
  DeviceCodeScan scan;
  std::error_code error;
  const auto status = std::filesystem::symlink_status(root, error);
  if (error) {
    return fail("failed to scan {} for device code: {}", root.string(), error.message());
  }
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_regular_file(status)) {
    files.push_back(root);
  } else if (std::filesystem::is_directory(status)) {
    for (auto it = std::filesystem::recursive_directory_iterator(root, error);
         !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
      if (it->is_regular_file(error) && !it->is_symlink(error)) {
        files.push_back(it->path());
      }
    }
    if (error) {
      return fail("failed to scan {} for device code: {}", root.string(), error.message());
    }
  }
  std::ranges::sort(files);
  for (const auto& file : files) {
    HWIMG_TRY(with_context(scan_file(file, scan), fmt::format("failed to scan {} for device code", root.string())));
  }
  std::ranges::sort(scan.targets);
  const auto [first, last] = std::ranges::unique(scan.targets);
  scan.targets.erase(first, last);
  return scan;
}

Result<void> check_device_code(std::string_view variant_id, std::span<const GpuTarget> declared,
                               std::span<const GpuTarget> found) {
  std::vector<GpuTarget> want(declared.begin(), declared.end());
  std::vector<GpuTarget> have(found.begin(), found.end());
  std::ranges::sort(want);
  std::ranges::sort(have);
  if (want == have) {
    return {};
  }
  std::vector<GpuTarget> missing;
  std::vector<GpuTarget> extra;
  std::ranges::set_difference(want, have, std::back_inserter(missing));
  std::ranges::set_difference(have, want, std::back_inserter(extra));
  std::vector<std::string> differences;
  if (!missing.empty()) {
    differences.push_back("missing " + names_or_none(missing));
  }
  if (!extra.empty()) {
    differences.push_back("not declared " + names_or_none(extra));
  }
  return fail("failed to check the device code of variant {}: its files embed {} but it declares {} ({})",
              variant_id, names_or_none(have), names_or_none(want), util::join(differences, "; "));
}

}  // namespace hwimg::hw
