#pragma once
// Internal to the hw area: code that runs only after a CPU check the instruction scan can see
// (docs/compatibility.md#instruction-sets). While decoding, each instruction is noted as a CPU
// check (`cpuid`; a read of GCC/Clang's `__cpu_model` or `__cpu_features2`, directly or through
// its GOT slot, as `__builtin_cpu_supports` compiles to; a call of `__cpu_indicator_init`) or as a
// reference to other code (a direct call or jump, a RIP-relative LEA); the notes of separately
// decoded stretches simply concatenate. After the decode, a function is dispatched when its feature
// uses all follow its own check, or when every reference to it comes after a check in another
// function or from dispatched code.

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <Zydis/Zydis.h>

#include "hwimg/hw/code_scan.hpp"
#include "hwimg/hw/elf.hpp"

namespace hwimg::hw::detail {

inline constexpr std::uint64_t no_address = std::numeric_limits<std::uint64_t>::max();

// Whether other objects can call a function without the scan seeing it.
enum class Linkage : std::uint8_t { internal, exported };

// Where functions start and where the stretches between them do: a function's end starts a gap.
struct CodeBoundary {
  std::uint64_t address = 0;
  bool starts_function = false;
  std::string name;
  CodeDispatch dispatch = CodeDispatch::none;
  Linkage linkage = Linkage::internal;
};

// The symbol, or "code at 0x1234" for a stretch without one.
[[nodiscard]] std::string boundary_name(const CodeBoundary& boundary);

struct CodeReference {
  std::uint64_t from = 0;  // the referring instruction
  std::uint64_t to = 0;
};

// What the decode collects; a stretch's notes append to the others'.
struct DispatchNotes {
  std::vector<std::uint64_t> checks;  // addresses of CPU checks
  std::vector<CodeReference> references;
};

// The addresses whose use is a CPU check, from a file's symbols and relocations.
class CpuCheckData {
 public:
  // `code_begin`..`code_end` spans the executable sections: LEAs of addresses outside are of data.
  CpuCheckData(std::span<const ElfSymbol> symbols, std::span<const ElfRelocation> relocations, std::uint16_t elf_type,
               std::uint64_t code_begin, std::uint64_t code_end);

  // Whether `note` may note `instruction`: the decode loop's cheap test, most instructions fail it.
  [[nodiscard]] bool may_note(const ZydisDecodedInstruction& instruction) const {
    const auto& raw = instruction.raw;
    const bool rip_relative = raw.modrm.mod == 0 && raw.modrm.rm == 5;
    return raw.imm[0].is_relative || (raw.disp.size == 32 && (m_absolute || rip_relative)) ||
           (m_absolute && raw.imm[0].size >= 32) || instruction.mnemonic == ZYDIS_MNEMONIC_CPUID;
  }

  // Notes `instruction` at `address` if it checks the CPU or refers to code outside
  // [`function`, `function_end`), the stretch it lies in.
  void note(const ZydisDecodedInstruction& instruction, std::uint64_t address, std::uint64_t function,
            std::uint64_t function_end, DispatchNotes& notes) const;

 private:
  struct Range {
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    [[nodiscard]] bool holds(std::uint64_t address) const { return address >= begin && address < end; }
  };
  [[nodiscard]] bool is_cpu_data(std::uint64_t address) const;

  std::vector<Range> m_data;  // __cpu_model, __cpu_features2 and the GOT slots holding their addresses
  std::uint64_t m_indicator_init = 0;
  std::uint64_t m_code_begin = 0;
  std::uint64_t m_code_end = 0;
  bool m_absolute = false;  // ET_EXEC: addresses also appear as immediates and absolute displacements
};

// The dispatch of each boundary with its checking function's name ("" where none applies), given the
// first feature use in each (no_address where none). Dispatch already set by symbol is kept.
struct BoundaryDispatch {
  CodeDispatch dispatch = CodeDispatch::none;
  std::string dispatched_by;
};
[[nodiscard]] std::vector<BoundaryDispatch> resolve_dispatch(std::span<const CodeBoundary> boundaries,
                                                             std::span<const std::uint64_t> first_use,
                                                             DispatchNotes notes);

}  // namespace hwimg::hw::detail
