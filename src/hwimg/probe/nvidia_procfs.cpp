#include "hwimg/probe/nvidia_procfs.hpp"

#include <algorithm>
#include <system_error>
#include <vector>

#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::probe {
namespace {

namespace fs = std::filesystem;

bool is_driver_version(std::string_view token) {
  const auto parts = util::split(token, '.');
  return (parts.size() == 2 || parts.size() == 3) && std::ranges::all_of(parts, [](const std::string& part) {
           return !part.empty() && std::ranges::all_of(part, [](char c) { return c >= '0' && c <= '9'; });
         });
}

std::optional<std::string> read_text(const fs::path& path) {
  auto text = util::read_file(path);
  return text ? std::optional<std::string>(std::move(*text)) : std::nullopt;
}

}  // namespace

std::optional<std::string> parse_nvidia_version_file(std::string_view text) {
  for (const auto& line : util::split(text, '\n')) {
    if (!line.starts_with("NVRM version:")) {
      continue;
    }
    // Both formats separate fields by blanks; the first dotted number is the version.
    for (const auto& token : util::split(line, ' ')) {
      if (is_driver_version(util::trim(token))) {
        return std::string(util::trim(token));
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

GpuFacts parse_gpu_information(std::string_view text) {
  GpuFacts gpu;
  for (const auto& line : util::split(text, '\n')) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) {
      continue;
    }
    const auto key = util::trim(std::string_view(line).substr(0, colon));
    const auto value = std::string(util::trim(std::string_view(line).substr(colon + 1)));
    if (key == "Model") {
      gpu.name = value;
    } else if (key == "GPU UUID") {
      gpu.uuid = value;
    }
  }
  return gpu;
}

std::optional<std::string> read_nvidia_driver_version(const fs::path& proc_root, const fs::path& sys_root) {
  if (const auto text = read_text(proc_root / "driver/nvidia/version")) {
    if (auto version = parse_nvidia_version_file(*text)) {
      return version;
    }
  }
  if (const auto text = read_text(sys_root / "module/nvidia/version")) {
    const auto version = std::string(util::trim(*text));
    if (is_driver_version(version)) {
      return version;
    }
  }
  return std::nullopt;
}

std::optional<NvidiaFacts> read_nvidia_procfs(const fs::path& proc_root, const fs::path& sys_root,
                                              const StepLog& log) {
  auto version = read_nvidia_driver_version(proc_root, sys_root);
  if (!version) {
    log("procfs: no NVIDIA kernel module (no driver/nvidia/version)");
    return std::nullopt;
  }
  NvidiaFacts facts;
  facts.source = "procfs";
  facts.driver_version = std::move(version);
  std::vector<fs::path> directories;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(proc_root / "driver/nvidia/gpus", error)) {
    directories.push_back(entry.path());
  }
  std::ranges::sort(directories);
  for (const auto& directory : directories) {
    if (const auto text = read_text(directory / "information")) {
      auto gpu = parse_gpu_information(*text);
      gpu.index = static_cast<int>(facts.gpus.size());
      facts.gpus.push_back(std::move(gpu));
    }
  }
  log(fmt::format("procfs: driver {}, {} GPU(s), no compute capability", *facts.driver_version, facts.gpus.size()));
  return facts;
}

}  // namespace hwimg::probe
