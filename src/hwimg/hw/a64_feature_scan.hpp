#pragma once
// What an AArch64 ELF program's instructions need from the CPU, function by function
// (docs/compatibility.md#instruction-sets-arm64). No decoder Debian 12 ships knows SVE (Capstone
// 4.0.2 has no SVE tables; Zydis is x86 only), so the executable sections are walked one 4-byte
// A64 instruction at a time and classified by the top-level encoding table of the Arm
// Architecture Reference Manual: bits[28:25] = 0b0010 is the SVE encoding space, reported as
// "sve". SVE2 lies in the same space and is not told apart; other extensions (LSE atomics,
// dotprod, ...) share their spaces with the base instructions and are not checked. Bytes after a
// `$d` mapping symbol (AAELF64) are data, not instructions, up to the next `$x`. Functions are
// attributed and dispatched code told apart as in the x86 scan (hw/detail/code_layout.hpp); an
// IFUNC resolver's targets are the addresses it forms with ADR, or ADRP and ADD.

#include <cstddef>
#include <span>
#include <string_view>

#include "hwimg/hw/code_scan.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::hw {

// `bytes` is a whole 64-bit AArch64 ELF file; `name` names it in errors.
[[nodiscard]] Result<CodeScan> scan_a64_features(std::span<const std::byte> bytes, std::string_view name);

}  // namespace hwimg::hw
