#include "hwimg/hw/detail/x86_chunk_scan.hpp"

#include <algorithm>
#include <array>

#include "hwimg/hw/detail/x86_isa_features.hpp"

namespace hwimg::hw::detail {
namespace {

// TZCNT is `rep bsf`, which GCC emits for a count of trailing zeros at any -march because CPUs
// without BMI1 run it as BSF; XGETBV only ever follows the CPUID check for OSXSAVE that tells
// whether AVX state is enabled (libgcc's __cpu_indicator_init, glibc's init_cpu_features).
bool runs_everywhere(ZydisMnemonic mnemonic) {
  return mnemonic == ZYDIS_MNEMONIC_TZCNT || mnemonic == ZYDIS_MNEMONIC_XGETBV;
}

using IsaSets = std::bitset<ZYDIS_ISA_SET_MAX_VALUE + 1>;

const IsaSets& sets_that_need_features() {
  static const auto sets = [] {
    IsaSets needs;
    for (int set = 0; set <= ZYDIS_ISA_SET_MAX_VALUE; ++set) {
      needs[static_cast<std::size_t>(set)] = !x86_isa_set_features(set).empty();
    }
    return needs;
  }();
  return sets;
}

std::size_t first_boundary(std::span<const CodeBoundary> boundaries, std::uint64_t address) {
  const auto after = std::ranges::upper_bound(boundaries, address, {}, &CodeBoundary::address);
  return after == boundaries.begin() ? 0 : static_cast<std::size_t>(after - boundaries.begin() - 1);
}

// Which offsets in the first lead_in_window bytes from `start` the next chunk's decode starts an
// instruction at: the same decode it does itself.
std::vector<bool> lead_in_starts(const ChunkContext& context, std::span<const std::byte> bytes, std::size_t start) {
  std::vector<bool> starts(lead_in_window, false);
  ZydisDecodedInstruction instruction;
  for (std::size_t offset = start; offset < bytes.size() && offset - start < lead_in_window;) {
    starts[offset - start] = true;
    const bool decoded = ZYAN_SUCCESS(context.zydis->decode_instruction(
        context.decoder, nullptr, bytes.data() + offset, bytes.size() - offset, &instruction));
    offset += decoded ? instruction.length : 1;
  }
  return starts;
}

}  // namespace

std::vector<Chunk> split_code(std::span<const CodeRange> code, std::size_t max_chunks, std::size_t min_bytes) {
  std::size_t total = 0;
  for (const auto& part : code) total += part.bytes.size();
  const auto size = std::max(min_bytes, total / std::max<std::size_t>(1, max_chunks) + 1);
  std::vector<Chunk> chunks;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const auto length = code[i].bytes.size();
    // The last piece of a part is merged into the one before rather than left small.
    for (std::size_t begin = 0; begin < length;) {
      const auto end = length - begin < size + size / 2 ? length : begin + size;
      chunks.push_back({i, begin, end});
      begin = end;
    }
  }
  return chunks;
}

ChunkScan scan_chunk(const ChunkContext& context, const Chunk& chunk) {
  ChunkScan out;
  const auto& part = context.code[chunk.part];
  const auto bytes = part.bytes;
  const auto& boundaries = context.boundaries;
  const auto& needs = sets_that_need_features();
  const auto next_starts =
      chunk.end < bytes.size() ? lead_in_starts(context, bytes, chunk.end) : std::vector<bool>();
  // Before this, the decode may be out of step: every use is kept for the merge to sort out.
  const auto trusted = chunk.begin == 0 ? 0 : chunk.begin + lead_in_window;
  auto current = first_boundary(boundaries, part.address + chunk.begin);
  IsaSets seen;
  ZydisDecodedInstruction instruction;
  std::size_t offset = chunk.begin;
  while (offset < bytes.size()) {
    if (offset >= chunk.end) {
      const auto past = offset - chunk.end;
      if (past >= lead_in_window || next_starts[past]) {
        out.sync = part.address + offset;
        break;
      }
    }
    if (!ZYAN_SUCCESS(context.zydis->decode_instruction(context.decoder, nullptr, bytes.data() + offset,
                                                        bytes.size() - offset, &instruction))) {
      ++offset;
      continue;
    }
    const auto address = part.address + offset;
    const auto advance = [&] {
      while (current + 1 < boundaries.size() && boundaries[current + 1].address <= address) {
        ++current;
        seen.reset();
      }
    };
    if (context.cpu_checks->may_note(instruction)) {
      advance();
      context.cpu_checks->note(instruction, address, boundaries[current].address,
                               current + 1 < boundaries.size() ? boundaries[current + 1].address : no_address,
                               out.notes);
    }
    const auto set = static_cast<std::size_t>(instruction.meta.isa_set);
    if (needs[set] && !runs_everywhere(instruction.mnemonic)) {
      advance();
      if (!seen.test(set)) {
        if (offset >= trusted) seen.set(set);
        const auto features = x86_isa_set_features(static_cast<int>(set));
        out.uses.push_back({current, static_cast<int>(set),
                            {address, context.zydis->mnemonic_string(instruction.mnemonic),
                             std::vector<std::string_view>(features.begin(), features.end())}});
      }
    }
    offset += instruction.length;
  }
  return out;
}

MergedScan merge_chunks(std::span<const Chunk> chunks, std::vector<ChunkScan> scans, std::size_t boundary_count) {
  MergedScan merged;
  merged.uses.resize(boundary_count);
  std::vector<IsaSets> seen(boundary_count);
  for (std::size_t i = 0; i < scans.size(); ++i) {
    const bool follows = i > 0 && chunks[i - 1].part == chunks[i].part;
    const auto from = follows ? scans[i - 1].sync : 0;
    const auto kept = [from](std::uint64_t address) { return address >= from; };
    auto& scan = scans[i];
    for (auto& [boundary, set, use] : scan.uses) {
      if (!kept(use.address) || seen[boundary].test(static_cast<std::size_t>(set))) continue;
      seen[boundary].set(static_cast<std::size_t>(set));
      merged.uses[boundary].push_back(std::move(use));
    }
    std::ranges::copy_if(scan.notes.checks, std::back_inserter(merged.notes.checks), kept);
    std::ranges::copy_if(scan.notes.references, std::back_inserter(merged.notes.references),
                         [&](const CodeReference& reference) { return kept(reference.from); });
  }
  return merged;
}

}  // namespace hwimg::hw::detail
