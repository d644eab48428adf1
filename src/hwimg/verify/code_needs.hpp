#pragma once
// What the programs and libraries of one layer need from a CPU, whatever the label of the image
// that holds it (docs/recipe.md#cpu-code): for each ELF file the CPU would run, its machine and
// class and, function by function, the instruction-set features its code uses beyond what every
// CPU of its architecture has, with whether that code is dispatched (runs only after a CPU check).
// Independent of any variant, so it is computed once per layer digest and kept (needs_cache.hpp);
// judge.hpp holds it against a variant's label.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hwimg/hw/code_scan.hpp"
#include "hwimg/hw/cpu_levels.hpp"
#include "hwimg/hw/elf_machine.hpp"
#include "hwimg/util/thread_pool.hpp"

namespace hwimg::verify {

// The first instruction that needs one feature in a function.
struct FeatureUse {
  std::string feature;   // /proc/cpuinfo spelling: "avx2"
  std::string mnemonic;  // "vpbroadcastd"
  std::uint64_t address = 0;
};

struct FunctionNeeds {
  std::string name;  // the symbol, or "code at 0x1234"
  hw::CodeDispatch dispatch = hw::CodeDispatch::none;
  std::string dispatched_by;     // the function whose CPU check it follows, if any
  std::vector<FeatureUse> uses;  // by address
};

struct FileNeeds {
  std::string path;  // in the image: "/usr/lib/libfoo.so"
  hw::ElfIdentity identity;
  // The GNU property GNU_PROPERTY_X86_ISA_1_NEEDED's level (x86-64 only).
  std::optional<hw::X86Level> needed_level;
  std::vector<FunctionNeeds> functions;  // only those that use a feature beyond the baseline
  std::string scan_error;                // why the code could not be read; empty when it was
  std::uint64_t code_bytes = 0;          // of executable sections decoded
};

struct LayerNeeds {
  std::vector<FileNeeds> files;  // every loadable ELF file, by path
  // Not a CPU need, but read in the same pass: entries that carry overlayfs's own xattrs, which
  // rootless Docker (25 and later) cannot set and so refuses to unpack (docs/recipe.md#overlayfs-xattrs).
  // The first few as "/opt (user.overlay.origin)", in layer order, and how many entries have one.
  std::vector<std::string> overlay_xattrs;
  std::size_t overlay_xattr_entries = 0;
};

// The needs of one file given whole; nothing when it is not an ELF program or library (ET_EXEC or
// ET_DYN), including device code and relocatable objects. A large program's code is decoded in
// chunks on `pool` when there is one.
[[nodiscard]] std::optional<FileNeeds> file_needs(std::span<const std::byte> bytes, std::string path,
                                                  util::ThreadPool* pool = nullptr);

// Whether the first bytes of a file (up to hw::elf_identity_size) are a loadable ELF file's.
[[nodiscard]] bool may_be_program(std::span<const std::byte> head);

// What `function` needs beyond `allowed`: "avx2 (vpbroadcastd at 0x1139), fma (vfmadd231ps at 0x1150)".
[[nodiscard]] std::string features_beyond(const FunctionNeeds& function, const hw::FeatureSet& allowed);

}  // namespace hwimg::verify
