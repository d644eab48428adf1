#include "hwimg/cdi/device_nodes.hpp"

#include <fmt/format.h>

namespace hwimg::cdi {

std::string gpu_node(int index) { return fmt::format("/dev/nvidia{}", index); }

}  // namespace hwimg::cdi
