#pragma once
// GPU compute capabilities and device-code targets (`sm_XY[a|f]` SASS, `compute_XY[a|f]` PTX):
// names, which toolkit compiles which, and how a target serves a device (docs/compatibility.md#gpu-targets,
// docs/selection.md#rule-3-gpu-code, docs/selection.md#ranking key 2).

#include <compare>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/cuda_release.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::hw {

struct ComputeCapability {
  int major = 0;
  int minor = 0;

  auto operator<=>(const ComputeCapability&) const = default;
  [[nodiscard]] std::string str() const;  // "9.0"
  [[nodiscard]] int number() const { return major * 10 + minor; }  // 90, as in sm_90
};

// "9.0", "12.1"; nullopt for anything else.
[[nodiscard]] std::optional<ComputeCapability> parse_compute_capability(std::string_view text);

enum class CodeKind { sass, ptx };
// Ordered by how much a target gives up: `f` (family) and `a` (arch-specific) features nest.
enum class ArchFeatures { baseline, family, arch_specific };

struct GpuTarget {
  CodeKind kind = CodeKind::sass;
  ComputeCapability capability;
  ArchFeatures features = ArchFeatures::baseline;

  // Orders by capability, then features, then SASS before PTX: sm_90, compute_90, sm_90a.
  [[nodiscard]] std::strong_ordering operator<=>(const GpuTarget& other) const;
  bool operator==(const GpuTarget&) const = default;
  [[nodiscard]] std::string name() const;  // "sm_90a", "compute_80"
};

// Parses a target name that exists in some CUDA toolkit. Errors name the nearest valid target:
// "unknown GPU target 'sm_8O' (did you mean sm_80?)".
[[nodiscard]] Result<GpuTarget> parse_gpu_target(std::string_view name);
// Every target some toolkit knows, SASS and PTX, for suggestions and listings.
[[nodiscard]] std::vector<std::string> gpu_target_names();

// Names joined by ",": "sm_80,sm_90,compute_90".
[[nodiscard]] std::string join_target_names(std::span<const GpuTarget> targets);

// Why `toolkit` cannot compile `target` ("sm_100 needs CUDA 12.8 or newer"), or success.
[[nodiscard]] Result<void> check_toolkit_supports(CudaVersion toolkit, const GpuTarget& target);

// The compute capabilities of family `f` targets (current guide: sm_100f on 10.0, 10.3, 10.7).
[[nodiscard]] std::span<const ComputeCapability> family_members(ComputeCapability family);

// Every row of the target and family tables with the document it comes from.
[[nodiscard]] std::vector<FactSource> gpu_target_sources();

// How a target's code serves a device, best first (docs/selection.md#ranking key 2).
enum class ServeKind { arch_specific, family, sass_same, sass_lower_minor, ptx_jit, none };

struct Serving {
  ServeKind kind = ServeKind::none;
  int minor_distance = 0;  // sass_lower_minor: device minor minus the target's minor

  [[nodiscard]] bool serves() const { return kind != ServeKind::none; }
  [[nodiscard]] bool by_sass() const { return serves() && kind != ServeKind::ptx_jit; }
  // Better serving compares greater.
  [[nodiscard]] std::strong_ordering operator<=>(const Serving& other) const;
  bool operator==(const Serving&) const = default;
};

[[nodiscard]] Serving serve(const GpuTarget& target, ComputeCapability device);
// The best serving among `targets` (none for an empty list).
[[nodiscard]] Serving best_serving(std::span<const GpuTarget> targets, ComputeCapability device);
// "arch-specific sm_90a", "PTX JIT", ... for explanations.
[[nodiscard]] std::string_view serve_kind_name(ServeKind kind);

// The capabilities a target runs on, as ranges: [min, max) with max absent for "and newer".
struct CapabilityRange {
  ComputeCapability min;
  std::optional<ComputeCapability> max_exclusive;
};
[[nodiscard]] std::vector<CapabilityRange> served_capabilities(const GpuTarget& target);

}  // namespace hwimg::hw
