#pragma once
// What an x86-64 ELF program's instructions need from the CPU, function by function
// (docs/compatibility.md#instruction-sets): the executable sections are decoded with Zydis, each
// instruction's ISA set mapped to /proc/cpuinfo feature names, and each instruction attributed to
// the function symbol (.symtab, else .dynsym) whose range holds it, or to the stretch of code
// between symbols, named by its address, when there is none. Code meant to run only where the CPU
// has a feature is told apart as dispatched: GCC/Clang multiversions (`target_clones`, `target`:
// `f.avx2`, `f.arch_x86_64_v3`, `f.avx2.0`, next to `f.resolver` or an IFUNC `f`) and every
// address an IFUNC resolver loads (glibc's string functions, also when stripped), and the few
// glibc/libstdc++ functions a static program carries that check CPUID themselves. Other code
// behind a CPUID check is not recognised yet.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/cpu_levels.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::hw {

enum class X86Dispatch {
  none,          // always reachable as far as the scan can tell
  multiversion,  // a target_clones/target version, by its symbol name
  ifunc_target,  // an address an IFUNC resolver returns
  resolver,      // an IFUNC resolver itself
  runtime_library,  // a known glibc/libstdc++ function that checks CPUID first (static programs)
};

// The first instruction of one ISA set in a function.
struct X86InstructionUse {
  std::uint64_t address = 0;
  std::string mnemonic;                  // "vpaddd"
  std::vector<std::string_view> features;  // "avx2"; "avx512f", "avx512vl"
};

struct X86FunctionUse {
  std::string name;            // the symbol, or "code at 0x1234" between symbols
  std::uint64_t address = 0;
  X86Dispatch dispatch = X86Dispatch::none;
  std::vector<X86InstructionUse> uses;  // one per ISA set that needs a feature, by address
};

struct X86IsaScan {
  // Only functions with at least one instruction that needs a feature.
  std::vector<X86FunctionUse> functions;
  // The GNU property GNU_PROPERTY_X86_ISA_1_NEEDED's highest level (GCC writes it with -mneeded).
  std::optional<X86Level> needed_level;
  std::uint64_t bytes = 0;           // decoded
  std::uint64_t instructions = 0;
  std::uint64_t undecodable = 0;     // bytes skipped one at a time
};

// `bytes` is a whole 64-bit x86-64 ELF file; `name` names it in errors.
[[nodiscard]] Result<X86IsaScan> scan_x86_isa(std::span<const std::byte> bytes, std::string_view name);

// Whether `dispatch` is code only run after a CPU check.
[[nodiscard]] inline bool is_dispatched(X86Dispatch dispatch) { return dispatch != X86Dispatch::none; }
[[nodiscard]] std::string_view x86_dispatch_name(X86Dispatch dispatch);

}  // namespace hwimg::hw
