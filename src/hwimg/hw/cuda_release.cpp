#include "hwimg/hw/cuda_release.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>

#include "hwimg/util/strings.hpp"

namespace hwimg::hw {

namespace {

std::optional<int> parse_number(std::string_view text) {
  if (text.empty() || text.size() > 6 || !std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

struct ToolkitRelease {
  CudaVersion version;
  std::string_view native_driver;  // empty: the release bundles no driver (13.4)
  std::string_view source;
};

// docs/compatibility.md#cuda-toolkit-drivers: the GA row of each release (Linux x86_64), each from
// that release's notes, table "CUDA Toolkit and Corresponding Driver Versions".
constexpr std::array toolkit_releases{
    ToolkitRelease{{11, 0}, "450.51.05",
                   "https://docs.nvidia.com/cuda/archive/11.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{11, 1}, "455.23",
                   "https://docs.nvidia.com/cuda/archive/11.1.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{11, 2}, "460.27.03",
                   "https://docs.nvidia.com/cuda/archive/11.2.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{11, 3}, "465.19.01",
                   "https://docs.nvidia.com/cuda/archive/11.3.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{11, 4}, "470.42.01",
                   "https://docs.nvidia.com/cuda/archive/11.4.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{11, 5}, "495.29.05",
                   "https://docs.nvidia.com/cuda/archive/11.5.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{11, 6}, "510.39.01",
                   "https://docs.nvidia.com/cuda/archive/11.6.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{11, 7}, "515.43.04",
                   "https://docs.nvidia.com/cuda/archive/11.7.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{11, 8}, "520.61.05",
                   "https://docs.nvidia.com/cuda/archive/11.8.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{12, 0}, "525.60.13",
                   "https://docs.nvidia.com/cuda/archive/12.0.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{12, 1}, "530.30.02",
                   "https://docs.nvidia.com/cuda/archive/12.1.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{12, 2}, "535.54.03",
                   "https://docs.nvidia.com/cuda/archive/12.2.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{12, 3}, "545.23.06",
                   "https://docs.nvidia.com/cuda/archive/12.3.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{12, 4}, "550.54.14",
                   "https://docs.nvidia.com/cuda/archive/12.4.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{12, 5}, "555.42.02",
                   "https://docs.nvidia.com/cuda/archive/12.5.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{12, 6}, "560.28.03",
                   "https://docs.nvidia.com/cuda/archive/12.6.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{12, 8}, "570.26",
                   "https://docs.nvidia.com/cuda/archive/12.8.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{12, 9}, "575.51.03",
                   "https://docs.nvidia.com/cuda/archive/12.9.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{13, 0}, "580.65.06",
                   "https://docs.nvidia.com/cuda/archive/13.0.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{13, 1}, "590.44.01",
                   "https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{13, 2}, "595.45.04",
                   "https://docs.nvidia.com/cuda/archive/13.2.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{13, 3}, "610.43.02",
                   "https://docs.nvidia.com/cuda/archive/13.3.0/cuda-toolkit-release-notes/index.html"},
    ToolkitRelease{{13, 4}, "",
                   "https://docs.nvidia.com/cuda/archive/13.4.1/cuda-toolkit-release-notes/index.html"},
};

constexpr std::array toolkit_versions = [] {
  std::array<CudaVersion, toolkit_releases.size()> versions{};
  for (std::size_t i = 0; i < toolkit_releases.size(); ++i) {
    versions[i] = toolkit_releases[i].version;
  }
  return versions;
}();

struct DriverBranch {
  int branch;
  CudaVersion cuda;
  std::string_view source;  // empty: the notes of the toolkit `cuda`, which shipped with this branch
};

// docs/compatibility.md#cuda-driver-branches. Branch 565 reports 12.7 although no 12.7 toolkit
// exists; 615 shipped with none (13.4 bundles no driver).
constexpr std::array driver_branches{
    DriverBranch{450, {11, 0}, ""}, DriverBranch{455, {11, 1}, ""}, DriverBranch{460, {11, 2}, ""},
    DriverBranch{465, {11, 3}, ""}, DriverBranch{470, {11, 4}, ""}, DriverBranch{495, {11, 5}, ""},
    DriverBranch{510, {11, 6}, ""}, DriverBranch{515, {11, 7}, ""}, DriverBranch{520, {11, 8}, ""},
    DriverBranch{525, {12, 0}, ""}, DriverBranch{530, {12, 1}, ""}, DriverBranch{535, {12, 2}, ""},
    DriverBranch{545, {12, 3}, ""}, DriverBranch{550, {12, 4}, ""}, DriverBranch{555, {12, 5}, ""},
    DriverBranch{560, {12, 6}, ""},
    DriverBranch{565, {12, 7}, "https://download.nvidia.com/XFree86/Linux-x86_64/565.57.01/README/index.html"},
    DriverBranch{570, {12, 8}, ""}, DriverBranch{575, {12, 9}, ""}, DriverBranch{580, {13, 0}, ""},
    DriverBranch{590, {13, 1}, ""}, DriverBranch{595, {13, 2}, ""}, DriverBranch{610, {13, 3}, ""},
    DriverBranch{615, {13, 4}, "https://github.com/NVIDIA/cutlass/releases/tag/v4.8.0dev"},
};

struct MinorCompatRow {
  int major;
  std::string_view floor;  // 11.x: NVIDIA's note (450.80.02), since 11.0 shipped with an older driver
  int upper_branch;        // 0: none
  std::string_view source;
};

constexpr std::string_view minor_compat_source =
    "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html";

// docs/compatibility.md#cuda-driver-floors: NVIDIA's table "CUDA Toolkit 11.x, 12.x, and 13.x Driver
// Version Ranges".
constexpr std::array minor_compat_rows{
    MinorCompatRow{11, "450.80.02", 525, minor_compat_source},
    MinorCompatRow{12, "525", 580, minor_compat_source},
    MinorCompatRow{13, "580", 0, minor_compat_source},
};

const ToolkitRelease* find_release(CudaVersion version) {
  const auto found = std::ranges::find(toolkit_releases, version, &ToolkitRelease::version);
  return found == toolkit_releases.end() ? nullptr : &*found;
}

}  // namespace

std::string CudaVersion::str() const { return fmt::format("{}.{}", major, minor); }

std::optional<CudaVersion> parse_cuda_version(std::string_view text) {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos) {
    return std::nullopt;
  }
  const auto major = parse_number(text.substr(0, dot));
  const auto minor = parse_number(text.substr(dot + 1));
  if (!major || !minor) {
    return std::nullopt;
  }
  return CudaVersion{*major, *minor};
}

CudaVersion cuda_version_from_int(int encoded) { return {encoded / 1000, encoded % 1000 / 10}; }

bool looks_like_driver_version(std::string_view text) {
  const auto parts = util::split(text, '.');
  return (parts.size() == 2 || parts.size() == 3) && std::ranges::all_of(parts, [](const std::string& part) {
           return !part.empty() && std::ranges::all_of(part, [](char c) { return c >= '0' && c <= '9'; });
         });
}

std::optional<DriverVersion> DriverVersion::parse(std::string_view text) {
  DriverVersion version;
  for (const auto& part : util::split(text, '.')) {
    const auto number = parse_number(part);
    if (!number) {
      return std::nullopt;
    }
    version.m_parts.push_back(*number);
  }
  version.m_text = std::string(text);
  return version;
}

std::strong_ordering DriverVersion::operator<=>(const DriverVersion& other) const {
  const auto size = std::max(m_parts.size(), other.m_parts.size());
  for (std::size_t i = 0; i < size; ++i) {
    const int mine = i < m_parts.size() ? m_parts[i] : 0;
    const int theirs = i < other.m_parts.size() ? other.m_parts[i] : 0;
    if (mine != theirs) {
      return mine <=> theirs;
    }
  }
  return std::strong_ordering::equal;
}

std::span<const CudaVersion> cuda_toolkit_versions() { return toolkit_versions; }

bool is_cuda_toolkit_version(CudaVersion version) {
  return std::ranges::find(toolkit_versions, version) != toolkit_versions.end();
}

std::optional<DriverVersion> toolkit_native_driver(CudaVersion toolkit) {
  const auto* release = find_release(toolkit);
  if (release == nullptr || release->native_driver.empty()) {
    return std::nullopt;
  }
  return DriverVersion::parse(release->native_driver);
}

bool MinorCompatRange::contains(const DriverVersion& driver) const {
  return driver >= floor && (!upper_branch || driver.branch() < *upper_branch);
}

std::optional<MinorCompatRange> minor_compat_range(int major) {
  const auto found = std::ranges::find(minor_compat_rows, major, &MinorCompatRow::major);
  if (found == minor_compat_rows.end()) {
    return std::nullopt;
  }
  return MinorCompatRange{*DriverVersion::parse(found->floor),
                          found->upper_branch == 0 ? std::nullopt : std::optional(found->upper_branch)};
}

std::optional<DriverVersion> minor_compat_floor(int major) {
  const auto range = minor_compat_range(major);
  return range ? std::optional(range->floor) : std::nullopt;
}

std::optional<CudaVersion> cuda_version_of_driver(const DriverVersion& driver) {
  std::optional<CudaVersion> found;
  for (const auto& entry : driver_branches) {
    if (entry.branch <= driver.branch()) {
      found = entry.cuda;
    }
  }
  return found;
}

CudaCompatibility cuda_compatibility(CudaVersion toolkit, CudaVersion host_cuda,
                                     const std::optional<DriverVersion>& host_driver) {
  if (host_cuda >= toolkit) {
    return CudaCompatibility::native;
  }
  if (host_cuda.major != toolkit.major) {
    return CudaCompatibility::none;
  }
  const auto range = minor_compat_range(toolkit.major);
  if (!range || (host_driver && !range->contains(*host_driver))) {
    return CudaCompatibility::none;
  }
  return CudaCompatibility::minor_version;
}

std::vector<FactSource> cuda_release_sources() {
  std::vector<FactSource> sources;
  for (const auto& release : toolkit_releases) {
    sources.push_back({"toolkit drivers", release.version.str(), release.source});
  }
  for (const auto& entry : driver_branches) {
    const auto* release = find_release(entry.cuda);
    const auto source = !entry.source.empty() || release == nullptr ? entry.source : release->source;
    sources.push_back({"driver branches", std::to_string(entry.branch), source});
  }
  for (const auto& row : minor_compat_rows) {
    sources.push_back({"minor-version compatibility", fmt::format("{}.x", row.major), row.source});
  }
  return sources;
}

std::string describe_host_driver(CudaVersion host_cuda, const std::optional<DriverVersion>& host_driver) {
  if (host_driver) {
    return fmt::format("host driver {} supports CUDA {}", host_driver->str(), host_cuda.str());
  }
  return fmt::format("host driver supports CUDA {}", host_cuda.str());
}

}  // namespace hwimg::hw
