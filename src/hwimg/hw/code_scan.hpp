#pragma once
// What a program's machine code needs from the CPU, function by function, as the instruction
// scans report it (hw/x86_isa_scan; docs/recipe.md#cpu-code): the features each function's
// instructions need, and whether the function only runs after the program checked that the CPU
// has them (dispatched code).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/cpu_levels.hpp"

namespace hwimg::hw {

enum class CodeDispatch {
  none,          // always reachable as far as the scan can tell
  multiversion,  // a target_clones/target version, by its symbol name
  ifunc_target,  // an address an IFUNC resolver returns
  resolver,      // an IFUNC resolver itself
  runtime_library,  // a known glibc/libstdc++ function that checks CPUID first (static programs)
  own_cpu_check,    // every feature use follows the function's own CPU check
  after_cpu_check,  // only referenced from code after a CPU check in another function, or from dispatched code
};

// The first instruction of one ISA set in a function.
struct InstructionUse {
  std::uint64_t address = 0;
  std::string mnemonic;                  // "vpaddd"
  std::vector<std::string_view> features;  // "avx2"; "avx512f", "avx512vl"
};

struct FunctionUse {
  std::string name;            // the symbol, or "code at 0x1234" between symbols
  std::uint64_t address = 0;
  CodeDispatch dispatch = CodeDispatch::none;
  std::string dispatched_by;   // own_cpu_check, after_cpu_check: the function whose CPU check it follows
  std::vector<InstructionUse> uses;  // one per ISA set that needs a feature, by address
};

struct CodeScan {
  // Only functions with at least one instruction that needs a feature.
  std::vector<FunctionUse> functions;
  // The GNU property GNU_PROPERTY_X86_ISA_1_NEEDED's highest level (GCC writes it with -mneeded).
  std::optional<X86Level> needed_level;
  std::uint64_t bytes = 0;  // of executable sections decoded
};

// Whether `dispatch` is code only run after a CPU check.
[[nodiscard]] inline bool is_dispatched(CodeDispatch dispatch) { return dispatch != CodeDispatch::none; }
// "a target_clones/target version", "only reached after a CPU check in work" (`dispatched_by`).
[[nodiscard]] std::string dispatch_name(CodeDispatch dispatch, std::string_view dispatched_by = {});
// A stable one-word key ("ifunc_target") for files that keep scans, and back.
[[nodiscard]] std::string_view dispatch_key(CodeDispatch dispatch);
[[nodiscard]] std::optional<CodeDispatch> parse_dispatch_key(std::string_view key);

}  // namespace hwimg::hw
