#include "hwimg/hw/code_scan.hpp"

#include <fmt/format.h>

namespace hwimg::hw {

std::string dispatch_name(const FunctionUse& function) {
  switch (function.dispatch) {
    case CodeDispatch::none: return "not dispatched";
    case CodeDispatch::multiversion: return "a target_clones/target version";
    case CodeDispatch::ifunc_target: return "an IFUNC target";
    case CodeDispatch::resolver: return "an IFUNC resolver";
    case CodeDispatch::runtime_library: return "a glibc/libstdc++ function behind its own CPUID check";
    case CodeDispatch::own_cpu_check: return "behind the function's own CPU check";
    case CodeDispatch::after_cpu_check: return fmt::format("only reached after a CPU check in {}", function.dispatched_by);
  }
  return "";
}

}  // namespace hwimg::hw
