#pragma once
// docs/selection.md#rules: whether one variant runs on a host (every failed rule, in words a user can
// act on) and the key that ranks the compatible ones.

#include <compare>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hwimg/select/candidate.hpp"
#include "hwimg/select/gpu_rule.hpp"
#include "hwimg/select/host_view.hpp"

namespace hwimg::select {

// The ranking keys of docs/selection.md#ranking, in order; a greater key is a better variant.
struct RankKey {
  bool uses_gpu = false;               // 1. GPU code over CPU-only when GPUs are considered
  hw::Serving gpu_serving;             // 2. code quality on the worst-served GPU
  bool native_cuda = true;             // 3. native over minor-version compatibility
  bool bundled_driver = false;         // 4. the image's own driver over the host's, mounted
  int cpu_level = 0;                   // 5. higher level,
  bool named_cpu_target = false;       //    then a named target,
  std::size_t cpu_feature_count = 0;   //    then more required features
  std::optional<hw::CudaVersion> cuda; // 6. newer CUDA
  std::size_t position = 0;            // 7. earlier in the index

  [[nodiscard]] std::strong_ordering operator<=>(const RankKey& other) const;
  bool operator==(const RankKey& other) const { return (*this <=> other) == 0; }
};

struct Verdict {
  Requirements requirements;
  std::vector<std::string> reasons;  // every failed rule; empty when compatible
  std::vector<GpuFailure> gpu_failures;  // the considered GPUs it cannot run on, each with its reason
  RankKey key;
  std::string summary;               // why it fits: "SASS on 9.0, CUDA 13.0 native, x86-64-v3"
  std::optional<std::size_t> rank;   // 1 = chosen; set by the selector for compatible variants

  [[nodiscard]] bool compatible() const { return reasons.empty(); }
};

[[nodiscard]] Verdict judge(Requirements requirements, const HostView& host, std::size_t position);

}  // namespace hwimg::select
