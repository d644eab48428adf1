#include "hwimg/hw/fatbin_check.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::hw {

namespace {

// Lists at most this many modules that lack a declared target; the rest are counted.
constexpr std::size_t listed_modules = 4;

DeviceFileKind kind_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 20> head{};
  in.read(head.data(), head.size());
  return device_file_kind(std::as_bytes(std::span(head.data(), static_cast<std::size_t>(in.gcount()))),
                          path.filename().string());
}

Result<void> scan_file(const std::filesystem::path& path, DeviceCodeScan& scan) {
  const auto kind = kind_of(path);
  if (kind == DeviceFileKind::none) {
    return {};
  }
  HWIMG_TRY_ASSIGN(const auto bytes, util::read_file(path));
  HWIMG_TRY_ASSIGN(auto code, read_device_code(std::as_bytes(std::span(bytes)), kind, path.string()));
  if (!code.modules.empty()) {
    scan.files.push_back(path);
  }
  for (auto& module : code.modules) {
    scan.modules.push_back({path, std::move(module)});
  }
  for (const auto& target : code.relocatable_only) {
    scan.relocatable_only.emplace_back(path, target);
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

std::vector<GpuTarget> sorted(std::span<const GpuTarget> targets) {
  std::vector<GpuTarget> result(targets.begin(), targets.end());
  std::ranges::sort(result);
  return result;
}

// " (compute_90 is in FILE only as -rdc code ...)" for missing targets that exist only there.
std::string relocatable_note(const DeviceCodeScan& scan, std::span<const GpuTarget> missing) {
  std::vector<std::string> notes;
  for (const auto& [file, target] : scan.relocatable_only) {
    if (std::ranges::find(missing, target) != missing.end()) {
      notes.push_back(fmt::format("{} is in {} only as relocatable (-rdc) code in __nv_relfatbin, which the CUDA "
                                  "runtime never loads",
                                  target.name(), file.string()));
    }
  }
  return notes.empty() ? "" : fmt::format("; {}", util::join(notes, "; "));
}

// The modules that lack some declared target, each with what it has and lacks.
// "/opt/app/k (fatbin container at offset 4096); and 2 more modules": where the code is.
std::string module_list(const DeviceCodeScan& scan) {
  std::vector<std::string> modules;
  for (const auto& [file, module] : scan.modules) {
    if (modules.size() == listed_modules) break;
    modules.push_back(fmt::format("{} ({})", file.string(), module.where));
  }
  const auto more = scan.modules.size() - modules.size();
  return util::join(modules, "; ") + (more > 0 ? fmt::format("; and {} more modules", more) : "");
}

std::vector<std::string> lacking_modules(const DeviceCodeScan& scan, std::span<const GpuTarget> want) {
  std::vector<std::string> lacking;
  for (const auto& [file, module] : scan.modules) {
    std::vector<GpuTarget> missing;
    std::ranges::set_difference(want, module.targets, std::back_inserter(missing));
    if (!missing.empty()) {
      lacking.push_back(fmt::format("{} ({}) has {}, missing {}", file.string(), module.where,
                                    names_or_none(module.targets), names_or_none(missing)));
    }
  }
  return lacking;
}

}  // namespace

std::vector<GpuTarget> DeviceCodeScan::common_targets() const {
  std::vector<DeviceModule> plain;
  for (const auto& scanned : modules) {
    plain.push_back(scanned.module);
  }
  return hw::common_targets(plain);
}

void DeviceCodeScan::append(DeviceCodeScan other) {
  std::ranges::move(other.modules, std::back_inserter(modules));
  std::ranges::move(other.relocatable_only, std::back_inserter(relocatable_only));
  std::ranges::move(other.files, std::back_inserter(files));
}

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
  return scan;
}

Result<void> check_device_code(std::string_view variant_id, std::span<const GpuTarget> declared,
                               const DeviceCodeScan& scan) {
  const auto want = sorted(declared);
  const auto have = scan.common_targets();
  const bool uniform = std::ranges::all_of(
      scan.modules, [&](const ScannedModule& scanned) { return scanned.module.targets == have; });
  if (!uniform) {
    auto lacking = lacking_modules(scan, want);
    if (!lacking.empty()) {
      const auto more = lacking.size() > listed_modules ? lacking.size() - listed_modules : 0;
      lacking.resize(std::min(lacking.size(), listed_modules));
      std::vector<GpuTarget> missing;
      std::ranges::set_difference(want, have, std::back_inserter(missing));
      return fail("failed to check the device code of variant {}: it declares {}, but not every module of device "
                  "code has them, and a GPU runs only what each module has: {}{}{}",
                  variant_id, names_or_none(want), util::join(lacking, "; "),
                  more > 0 ? fmt::format("; and {} more", more) : "", relocatable_note(scan, missing));
    }
  }
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
  return fail("failed to check the device code of variant {}: {} {} but it declares {} ({}{}){}", variant_id,
              uniform ? "its files embed" : "every module of its files embeds", names_or_none(have), names_or_none(want),
              util::join(differences, "; "), relocatable_note(scan, missing),
              scan.modules.empty() ? std::string() : "; the code: " + module_list(scan));
}

}  // namespace hwimg::hw
