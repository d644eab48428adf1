#include "hwimg/hw/code_scan.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace hwimg::hw {

std::string dispatch_name(CodeDispatch dispatch, std::string_view dispatched_by) {
  switch (dispatch) {
    case CodeDispatch::none: return "not dispatched";
    case CodeDispatch::multiversion: return "a target_clones/target version";
    case CodeDispatch::ifunc_target: return "an IFUNC target";
    case CodeDispatch::resolver: return "an IFUNC resolver";
    case CodeDispatch::runtime_library: return "a glibc/libstdc++ function behind its own CPUID check";
    case CodeDispatch::own_cpu_check: return "behind the function's own CPU check";
    case CodeDispatch::after_cpu_check: return fmt::format("only reached after a CPU check in {}", dispatched_by);
  }
  return "";
}

namespace {
constexpr std::array<std::pair<CodeDispatch, std::string_view>, 7> dispatch_keys{{
    {CodeDispatch::none, "none"},
    {CodeDispatch::multiversion, "multiversion"},
    {CodeDispatch::ifunc_target, "ifunc_target"},
    {CodeDispatch::resolver, "resolver"},
    {CodeDispatch::runtime_library, "runtime_library"},
    {CodeDispatch::own_cpu_check, "own_cpu_check"},
    {CodeDispatch::after_cpu_check, "after_cpu_check"},
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
