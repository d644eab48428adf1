#include "hwimg/hw/code_scan.hpp"

namespace hwimg::hw {

std::string_view dispatch_name(CodeDispatch dispatch) {
  switch (dispatch) {
    case CodeDispatch::none: return "not dispatched";
    case CodeDispatch::multiversion: return "a target_clones/target version";
    case CodeDispatch::ifunc_target: return "an IFUNC target";
    case CodeDispatch::resolver: return "an IFUNC resolver";
    case CodeDispatch::runtime_library: return "a glibc/libstdc++ function behind its own CPUID check";
  }
  return "";
}

}  // namespace hwimg::hw
