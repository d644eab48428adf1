#pragma once
// What an unknown CPU or GPU target name most likely meant, for the error that refuses it. Beyond
// typos ("sm_8O", "haswel"), people write the spellings of the tools they came from: compute
// capabilities as PyTorch's TORCH_CUDA_ARCH_LIST ("8.6+PTX") or CMake's CUDA_ARCHITECTURES
// ("90-real") write them, architecture and product names ("Hopper", "H100"), GCC's -march names
// ("znver4"), Docker's platform variants ("v3") (docs/compatibility.md#target-name-hints).

#include <string>
#include <string_view>

namespace hwimg::hw {

// " (did you mean sm_90? ...)", or "" when nothing comes close: ready to append to
// "unknown GPU target 'NAME'".
[[nodiscard]] std::string gpu_target_hint(std::string_view name);

// The same for "unknown CPU target 'NAME'".
[[nodiscard]] std::string cpu_target_hint(std::string_view name);

}  // namespace hwimg::hw
