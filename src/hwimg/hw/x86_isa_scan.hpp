#pragma once
// What an x86-64 ELF program's instructions need from the CPU, function by function
// (docs/compatibility.md#instruction-sets): the executable sections are decoded with Zydis, each
// instruction's ISA set mapped to /proc/cpuinfo feature names, and each instruction attributed to
// the function symbol (.symtab, else .dynsym) whose range holds it, or to the stretch of code
// between symbols, named by its address, when there is none. Code meant to run only where the CPU
// has a feature is told apart as dispatched: GCC/Clang multiversions (`target_clones`, `target`:
// `f.avx2`, `f.arch_x86_64_v3`, `f.avx2.0`, next to `f.resolver` or an IFUNC `f`) and every
// address an IFUNC resolver loads (glibc's string functions, also when stripped), and the few
// glibc/libstdc++ functions a static program carries that check CPUID themselves, and code behind
// a CPU check the decoder can see (hw/detail/x86_dispatch.hpp).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/code_scan.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/thread_pool.hpp"

namespace hwimg::hw {

struct ScanThreads {
  util::ThreadPool* pool = nullptr;  // none: the caller's thread alone
  // Code is cut into chunks of at least this many bytes, one task each; below a few MiB a
  // chunk's task costs more than it saves (tests make it small to check that chunks agree).
  std::size_t min_chunk_bytes = std::size_t{4} << 20;
};

// `bytes` is a whole 64-bit x86-64 ELF file; `name` names it in errors. With a pool, large code is
// decoded in chunks on its threads (the caller's thread helps), with the same result.
[[nodiscard]] Result<CodeScan> scan_x86_isa(std::span<const std::byte> bytes, std::string_view name,
                                            ScanThreads threads = {});

}  // namespace hwimg::hw
