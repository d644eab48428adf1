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
  std::string_view native_driver;  // empty: not published
};

// docs/compatibility.md#cuda-toolkit-drivers, the GA row of each release (Linux x86_64).
constexpr std::array toolkit_releases{
    ToolkitRelease{{11, 0}, "450.51.05"},  ToolkitRelease{{11, 1}, "455.23"},
    ToolkitRelease{{11, 2}, "460.27.03"},  ToolkitRelease{{11, 3}, "465.19.01"},
    ToolkitRelease{{11, 4}, "470.42.01"},  ToolkitRelease{{11, 5}, "495.29.05"},
    ToolkitRelease{{11, 6}, "510.39.01"},  ToolkitRelease{{11, 7}, "515.43.04"},
    ToolkitRelease{{11, 8}, "520.61.05"},  ToolkitRelease{{12, 0}, "525.60.13"},
    ToolkitRelease{{12, 1}, "530.30.02"},  ToolkitRelease{{12, 2}, "535.54.03"},
    ToolkitRelease{{12, 3}, "545.23.06"},  ToolkitRelease{{12, 4}, "550.54.14"},
    ToolkitRelease{{12, 5}, "555.42.02"},  ToolkitRelease{{12, 6}, "560.28.03"},
    ToolkitRelease{{12, 8}, "570.26"},     ToolkitRelease{{12, 9}, "575.51.03"},
    ToolkitRelease{{13, 0}, "580.65.06"},  ToolkitRelease{{13, 1}, "590.44.01"},
    ToolkitRelease{{13, 2}, "595.45.04"},  ToolkitRelease{{13, 3}, "610.43.02"},
    ToolkitRelease{{13, 4}, ""},
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
};

// docs/compatibility.md#cuda-driver-branches. Branch 565 reports 12.7 although no 12.7 toolkit exists.
constexpr std::array driver_branches{
    DriverBranch{450, {11, 0}}, DriverBranch{455, {11, 1}}, DriverBranch{460, {11, 2}},
    DriverBranch{465, {11, 3}}, DriverBranch{470, {11, 4}}, DriverBranch{495, {11, 5}},
    DriverBranch{510, {11, 6}}, DriverBranch{515, {11, 7}}, DriverBranch{520, {11, 8}},
    DriverBranch{525, {12, 0}}, DriverBranch{530, {12, 1}}, DriverBranch{535, {12, 2}},
    DriverBranch{545, {12, 3}}, DriverBranch{550, {12, 4}}, DriverBranch{555, {12, 5}},
    DriverBranch{560, {12, 6}}, DriverBranch{565, {12, 7}}, DriverBranch{570, {12, 8}},
    DriverBranch{575, {12, 9}}, DriverBranch{580, {13, 0}}, DriverBranch{590, {13, 1}},
    DriverBranch{595, {13, 2}}, DriverBranch{610, {13, 3}}, DriverBranch{615, {13, 4}},
};

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
  for (const auto& release : toolkit_releases) {
    if (release.version == toolkit && !release.native_driver.empty()) {
      return DriverVersion::parse(release.native_driver);
    }
  }
  return std::nullopt;
}

std::optional<DriverVersion> minor_compat_floor(int major) {
  // NVIDIA's table (docs/compatibility.md#cuda-driver-floors); 11.x uses the footnote's 450.80.02,
  // since 11.0 shipped with an older driver.
  switch (major) {
    case 11: return DriverVersion::parse("450.80.02");
    case 12: return DriverVersion::parse("525");
    case 13: return DriverVersion::parse("580");
    default: return std::nullopt;
  }
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
  const auto floor = minor_compat_floor(toolkit.major);
  if (!floor) {
    return CudaCompatibility::none;
  }
  if (host_driver && *host_driver < *floor) {
    return CudaCompatibility::none;
  }
  return CudaCompatibility::minor_version;
}

std::string describe_host_driver(CudaVersion host_cuda, const std::optional<DriverVersion>& host_driver) {
  if (host_driver) {
    return fmt::format("host driver {} supports CUDA {}", host_driver->str(), host_cuda.str());
  }
  return fmt::format("host driver supports CUDA {}", host_cuda.str());
}

}  // namespace hwimg::hw
