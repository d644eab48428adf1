#pragma once
// CUDA toolkit releases, NVIDIA driver versions and how they relate: which driver a toolkit needs
// natively, which CUDA version a driver branch supports (docs/compatibility.md#cuda-toolkits-and-drivers),
// and the minor-version-compatibility floors per major (docs/selection.md#rule-4-cuda-driver).

#include <compare>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hwimg::hw {

// A CUDA version "M.m": a toolkit release, or what a driver supports (cuDriverGetVersion).
struct CudaVersion {
  int major = 0;
  int minor = 0;

  auto operator<=>(const CudaVersion&) const = default;
  [[nodiscard]] std::string str() const;
};

// Strict "M.m" (digits only); "13" or "12.4.1" give nullopt.
[[nodiscard]] std::optional<CudaVersion> parse_cuda_version(std::string_view text);
// cuDriverGetVersion / nvmlSystemGetCudaDriverVersion encoding: 12020 -> 12.2.
[[nodiscard]] CudaVersion cuda_version_from_int(int encoded);

// An NVIDIA driver version such as "535.104.05"; compares component by component, numerically,
// with missing trailing components as zero (so "525" == "525.0" < "525.60.13").
// "535.247.01", "390.30": two or three numbers, as NVIDIA writes a driver version (and appends it
// to a driver library's file name); DriverVersion::parse takes any count.
[[nodiscard]] bool looks_like_driver_version(std::string_view text);

class DriverVersion {
public:
  [[nodiscard]] static std::optional<DriverVersion> parse(std::string_view text);

  [[nodiscard]] int branch() const { return m_parts.front(); }
  [[nodiscard]] const std::string& str() const { return m_text; }
  [[nodiscard]] std::strong_ordering operator<=>(const DriverVersion& other) const;
  [[nodiscard]] bool operator==(const DriverVersion& other) const { return (*this <=> other) == 0; }

private:
  std::vector<int> m_parts;
  std::string m_text;
};

// One row of a CUDA fact table and the public document it comes from: the tables are NVIDIA's
// facts, so each row must say where it was read (docs/compatibility.md#cuda-toolkits-and-drivers).
struct FactSource {
  std::string_view table;  // "toolkit drivers"
  std::string row;         // "12.8"
  std::string_view source; // an https:// address
};

// Every row of the toolkit, driver branch and minor-version tables with its source.
[[nodiscard]] std::vector<FactSource> cuda_release_sources();

// Every toolkit release, oldest first (11.0 ... 13.4; there is no 12.7 toolkit).
[[nodiscard]] std::span<const CudaVersion> cuda_toolkit_versions();
[[nodiscard]] bool is_cuda_toolkit_version(CudaVersion version);

// The Linux driver the toolkit's GA release shipped with: the native requirement. Absent where
// NVIDIA has not published it (13.4).
[[nodiscard]] std::optional<DriverVersion> toolkit_native_driver(CudaVersion toolkit);

// The drivers that run every toolkit of one major by minor-version compatibility, i.e. drivers of
// that major older than the toolkit: 11.x [450.80.02, 525), 12.x [525, 580), 13.x [580, -). A driver
// from the upper bound on is of a newer major and runs the toolkit natively instead
// (docs/compatibility.md#cuda-driver-floors).
struct MinorCompatRange {
  DriverVersion floor;
  std::optional<int> upper_branch;  // exclusive; absent for the newest major

  [[nodiscard]] bool contains(const DriverVersion& driver) const;
};
[[nodiscard]] std::optional<MinorCompatRange> minor_compat_range(int major);
// The range's floor: 11 -> 450.80.02, 12 -> 525, 13 -> 580.
[[nodiscard]] std::optional<DriverVersion> minor_compat_floor(int major);

// The CUDA version a driver supports, from its branch (535 -> 12.2, 565 -> 12.7); for a branch
// between known ones, the nearest older known branch's. Absent below branch 450.
[[nodiscard]] std::optional<CudaVersion> cuda_version_of_driver(const DriverVersion& driver);

enum class CudaCompatibility { native, minor_version, none };

// How a host runs code built with `toolkit` (docs/selection.md#rule-4-cuda-driver, without the
// device-code part: minor-version compatibility also needs every GPU served by SASS, which the
// caller checks).
// `host_driver` may be absent (facts from cuDriverGetVersion only); then the same major suffices.
[[nodiscard]] CudaCompatibility cuda_compatibility(CudaVersion toolkit, CudaVersion host_cuda,
                                                   const std::optional<DriverVersion>& host_driver);

// "host driver 535.104.05 supports CUDA 12.2", or "host driver supports CUDA 12.2" without a
// driver version, for rejection messages.
[[nodiscard]] std::string describe_host_driver(CudaVersion host_cuda,
                                               const std::optional<DriverVersion>& host_driver);

}  // namespace hwimg::hw
