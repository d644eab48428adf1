#pragma once
// The NVIDIA device nodes a CUDA process opens when no container toolkit mounts anything
// (docs/running.md#device-nodes): the driver-wide control nodes and one node per GPU.

#include <array>
#include <string>
#include <string_view>

namespace hwimg::cdi {

// Every container with a GPU gets all three: nvidiactl is the driver's control node, the
// nvidia-uvm pair is CUDA's unified memory (the tools node for profilers and debuggers).
inline constexpr std::array<std::string_view, 3> control_nodes{"/dev/nvidiactl", "/dev/nvidia-uvm",
                                                               "/dev/nvidia-uvm-tools"};

// "/dev/nvidia<index>": the GPU's node, named by its minor number, which hwimg takes to be the
// GPU's index in the host facts (docs/running.md#device-nodes says when the two differ).
[[nodiscard]] std::string gpu_node(int index);

}  // namespace hwimg::cdi
