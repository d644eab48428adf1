#include "hwimg/hw/code_scan.hpp"

#include <array>
#include <utility>

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

namespace {
constexpr std::array<std::pair<CodeDispatch, std::string_view>, 5> dispatch_keys{{
    {CodeDispatch::none, "none"},
    {CodeDispatch::multiversion, "multiversion"},
    {CodeDispatch::ifunc_target, "ifunc_target"},
    {CodeDispatch::resolver, "resolver"},
    {CodeDispatch::runtime_library, "runtime_library"},
}};
}  // namespace

std::string_view dispatch_key(CodeDispatch dispatch) {
  for (const auto& [value, key] : dispatch_keys) {
    if (value == dispatch) return key;
  }
  return "none";
}

std::optional<CodeDispatch> parse_dispatch_key(std::string_view key) {
  for (const auto& [value, name] : dispatch_keys) {
    if (name == key) return value;
  }
  return std::nullopt;
}

}  // namespace hwimg::hw
