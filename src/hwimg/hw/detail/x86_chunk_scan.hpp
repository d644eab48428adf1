#pragma once
// Internal to the hw area: the x86 scan's decode loop over one stretch of an executable section,
// so that a large .text is decoded by several threads at once (docs/recipe.md#cpu-code).
//
// A chunk starts at an arbitrary offset, where its first instructions may be decoded out of step
// with the real ones. x86 code falls back into step within a few instructions, so the chunk
// before it decodes on past its end until its own instruction stream and the next chunk's meet
// (`sync`), and whatever the next chunk found before that address is dropped when the chunks are
// merged. In its first `lead_in_window` bytes a chunk keeps every feature use, not only the first
// of each ISA set per function, so that a use dropped there cannot hide a later one.

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <Zydis/Zydis.h>

#include "hwimg/hw/code_scan.hpp"
#include "hwimg/hw/detail/code_layout.hpp"
#include "hwimg/hw/detail/x86_dispatch.hpp"
#include "hwimg/hw/detail/zydis_library.hpp"

namespace hwimg::hw::detail {

inline constexpr std::size_t lead_in_window = 4096;

struct Chunk {
  std::size_t part = 0;   // index into the code ranges
  std::size_t begin = 0;  // offsets into that part
  std::size_t end = 0;
};

// Chunks of at least `min_bytes` each, at most `max_chunks` in all, in address order.
[[nodiscard]] std::vector<Chunk> split_code(std::span<const CodeRange> code, std::size_t max_chunks,
                                            std::size_t min_bytes);

struct ChunkUse {
  std::size_t boundary = 0;
  int isa_set = 0;
  InstructionUse use;
};

struct ChunkScan {
  std::vector<ChunkUse> uses;  // in address order
  DispatchNotes notes;
  std::uint64_t sync = no_address;  // where the next chunk of the same part starts to count
};

// What the decode loop reads; shared by every chunk's thread, never written.
struct ChunkContext {
  const ZydisLibrary* zydis = nullptr;
  const ZydisDecoder* decoder = nullptr;
  std::span<const CodeRange> code;
  std::span<const CodeBoundary> boundaries;
  const CpuCheckData* cpu_checks = nullptr;
};

[[nodiscard]] ChunkScan scan_chunk(const ChunkContext& context, const Chunk& chunk);

// Every chunk's uses and notes, each chunk's from its predecessor's sync on, with the first use of
// each ISA set per boundary kept: per boundary, its uses by address.
struct MergedScan {
  std::vector<std::vector<InstructionUse>> uses;  // per boundary
  DispatchNotes notes;
};
[[nodiscard]] MergedScan merge_chunks(std::span<const Chunk> chunks, std::vector<ChunkScan> scans,
                                      std::size_t boundary_count);

}  // namespace hwimg::hw::detail
