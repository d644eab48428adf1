#pragma once
// Renderings of host facts other than JSON: a summary for people, and a Node Feature Discovery
// local feature file (features.d) so Kubernetes can schedule on the same facts.

#include <string>

#include "hwimg/probe/host_facts.hpp"

namespace hwimg::probe {

[[nodiscard]] std::string to_text(const HostFacts& facts);

// Labels in the `hwimg.org/` namespace (the reverse of the annotations' `org.hwimg.`): arch,
// vendor, level and its number, named target, the CPU flags some target needs, driver and CUDA
// versions, and each distinct GPU compute capability; then the same facts under the names clusters
// already select on: NFD's cumulative `cpu-cpuid.X86_64_V<n>` and GPU Feature Discovery's
// `nvidia.com/cuda.*` and `gpu.compute.*` (docs/compatibility.md#nfd-labels). Values that NFD
// would reject are left out.
[[nodiscard]] std::string to_nfd(const HostFacts& facts);

}  // namespace hwimg::probe
