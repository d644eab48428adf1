#pragma once
// NVIDIA_REQUIRE_* expressions (docs/compatibility.md#nvidia-require-grammar): parse and evaluate
// them as libnvidia-container does; write a variant's (docs/selection.md#nvidia_require_cuda).

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/cuda_release.hpp"
#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::hw {

enum class RequireKey { cuda, driver, arch, brand };
enum class RequireOp { eq, ne, lt, le, gt, ge };

struct RequireTerm {
  RequireKey key = RequireKey::cuda;
  RequireOp op = RequireOp::ge;
  std::string value;

  bool operator==(const RequireTerm&) const = default;
  [[nodiscard]] std::string str() const;  // "driver>=525"
};

// Terms joined by commas: all must hold.
struct RequireAlternative {
  std::vector<RequireTerm> terms;

  bool operator==(const RequireAlternative&) const = default;
  [[nodiscard]] std::string str() const;
};

// Alternatives separated by spaces: one must hold, for every visible GPU.
struct RequireExpression {
  std::vector<RequireAlternative> alternatives;

  bool operator==(const RequireExpression&) const = default;
  [[nodiscard]] std::string str() const;
};

// Strict where libnvidia-container is lazy: every term is checked, even those its evaluation
// would never reach. Keys are case-insensitive; `==` is invalid; versions are digits and dots.
[[nodiscard]] Result<RequireExpression> parse_nvidia_require(std::string_view text);

struct RequireDevice {
  ComputeCapability arch;
  std::string brand;  // NVML's ("NVIDIA", "NVIDIA RTX", "Tesla"); compared ignoring case and spaces
};

struct RequireHost {
  std::optional<CudaVersion> cuda;     // the driver's CUDA version
  std::optional<DriverVersion> driver;
  std::vector<RequireDevice> devices;  // none: evaluated once, `arch` and `brand` terms hold
};

// Nullopt when the expression holds for every device; otherwise libnvidia-container's wording of
// the failure: "unsatisfied condition: cuda>=12.8".
[[nodiscard]] std::optional<std::string> unsatisfied_condition(const RequireExpression& expression,
                                                               const RequireHost& host);

// The NVIDIA_REQUIRE_CUDA of a variant built with `toolkit` for `targets`: per GPU, native CUDA and
// any target serving it, or the major's minor-version floor and SASS serving it. It never refuses a
// host the rules accept (docs/selection.md#rules). Empty for a variant without GPU targets.
[[nodiscard]] std::string nvidia_require_cuda(CudaVersion toolkit, std::span<const GpuTarget> targets);

}  // namespace hwimg::hw
