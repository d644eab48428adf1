#include "hwimg/hw/a64_feature_scan.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "hwimg/hw/detail/code_layout.hpp"
#include "hwimg/hw/elf.hpp"
#include "hwimg/hw/elf_machine.hpp"

namespace hwimg::hw {
namespace {

using detail::CodeRange;

constexpr std::uint64_t a64_instruction_size = 4;
constexpr std::size_t a64_registers = 31;  // x0..x30; 31 is sp or xzr

// Bits[28:25] of an A64 instruction (Arm ARM, "A64 instruction set encoding"; op1 in recent
// editions).
constexpr std::uint32_t encoding_group(std::uint32_t word) { return (word >> 25) & 0xf; }
constexpr std::uint32_t group_sve = 0b0010;

// ADR and ADRP: op:immlo:10000:immhi:Rd. ADD (immediate), 64-bit: 1001000100:sh:imm12:Rn:Rd.
constexpr std::uint32_t pc_relative_mask = 0x1f000000;
constexpr std::uint32_t pc_relative_bits = 0x10000000;
constexpr std::uint32_t add_immediate_mask = 0xff800000;
constexpr std::uint32_t add_immediate_bits = 0x91000000;

// The mapping symbols of AAELF64 ("Mapping symbols"): "$x" or "$x.<any>" starts A64 code, "$d" or
// "$d.<any>" data, each up to the next mapping symbol of its section.
std::optional<bool> a64_mapping_symbol_is_data(std::string_view name) {
  if (name.size() < 2 || name[0] != '$' || (name.size() > 2 && name[2] != '.')) return std::nullopt;
  if (name[1] == 'd') return true;
  if (name[1] == 'x') return false;
  return std::nullopt;
}

// The stretches of a code section that hold instructions, by its mapping symbols; all of it when
// it has none (a stripped file).
std::vector<std::span<const std::byte>> a64_instruction_runs(const CodeRange& part, std::span<const ElfSymbol> symbols) {
  std::vector<std::pair<std::uint64_t, bool>> marks;  // address, is data
  for (const auto& symbol : symbols) {
    if (symbol.section != part.section || symbol.type != ElfSymbolType::none) continue;
    const auto is_data = a64_mapping_symbol_is_data(symbol.name);
    if (is_data && symbol.value >= part.address && symbol.value - part.address < part.bytes.size()) {
      marks.emplace_back(symbol.value - part.address, *is_data);
    }
  }
  std::ranges::sort(marks);
  std::vector<std::span<const std::byte>> runs;
  std::uint64_t start = 0;
  bool data = false;
  const auto close_run = [&](std::uint64_t end) {
    // A64 instructions are 4-byte aligned (by address; sections are aligned to at least 4).
    const auto first = (part.address + start + a64_instruction_size - 1) / a64_instruction_size *
                           a64_instruction_size - part.address;
    if (!data && first < end) runs.push_back(part.bytes.subspan(first, end - first));
  };
  for (const auto& [offset, is_data] : marks) {
    if (is_data == data) continue;
    close_run(offset);
    start = offset;
    data = is_data;
  }
  close_run(part.bytes.size());
  return runs;
}

std::uint32_t a64_word_at(std::span<const std::byte> bytes, std::size_t offset) {
  return read_le<std::uint32_t>(bytes, offset);
}

std::int64_t a64_sign_extend(std::uint64_t value, unsigned bits) {
  const auto shift = 64 - bits;
  return static_cast<std::int64_t>(value << shift) >> shift;
}

// The code addresses a resolver forms (ADR; ADRP then ADD to the same register): the versions it
// chooses between.
void collect_a64_resolver_targets(std::span<const CodeRange> code, std::uint64_t start, std::uint64_t size,
                              std::set<std::uint64_t>& targets) {
  const auto bytes = detail::code_bytes_at(code, start, size == 0 ? detail::unsized_resolver_bytes : size);
  std::array<std::optional<std::uint64_t>, a64_registers> pages{};
  for (std::size_t offset = 0; offset + a64_instruction_size <= bytes.size(); offset += a64_instruction_size) {
    const auto word = a64_word_at(bytes, offset);
    const auto address = start + offset;
    const auto rd = word & 0x1f;
    if ((word & pc_relative_mask) == pc_relative_bits) {
      const auto immediate = a64_sign_extend((((word >> 5) & 0x7ffff) << 2) | ((word >> 29) & 0x3), 21);
      const bool page = (word >> 31) != 0;
      const auto target = page ? (address & ~std::uint64_t{0xfff}) + static_cast<std::uint64_t>(immediate * 4096)
                               : address + static_cast<std::uint64_t>(immediate);
      if (rd < a64_registers) pages[rd] = page ? std::optional(target) : std::nullopt;
      if (!page && detail::is_code_address(code, target)) targets.insert(target);
    } else if ((word & add_immediate_mask) == add_immediate_bits) {
      const auto rn = (word >> 5) & 0x1f;
      const auto immediate = static_cast<std::uint64_t>((word >> 10) & 0xfff) << (((word >> 22) & 1) != 0 ? 12 : 0);
      if (rn < a64_registers && pages[rn]) {
        const auto target = *pages[rn] + immediate;
        if (detail::is_code_address(code, target)) targets.insert(target);
      }
      if (rd < a64_registers) pages[rd].reset();
    }
  }
}

// No AArch64 runtime function is known to run SVE only after its own check without an IFUNC.
bool no_a64_runtime_dispatch(std::string_view) { return false; }

}  // namespace

Result<CodeScan> scan_a64_features(std::span<const std::byte> bytes, std::string_view name) {
  HWIMG_TRY_ASSIGN(const auto header, read_elf_header(bytes, name));
  if (header.machine != elf_machine_aarch64) {
    return fail("failed to scan the instructions of {}: it is for {}, not AArch64", name,
                elf_machine_name(header.machine));
  }
  HWIMG_TRY_ASSIGN(const auto sections, read_elf_sections(bytes, name));
  HWIMG_TRY_ASSIGN(const auto symbols, read_elf_symbols(bytes, sections, name));
  const auto code = detail::executable_code(bytes, sections);

  std::set<std::uint64_t> resolvers;
  std::set<std::uint64_t> targets;
  for (const auto& symbol : symbols) {
    if (symbol.type == ElfSymbolType::gnu_ifunc && detail::is_defined_function(symbol)) {
      resolvers.insert(symbol.value);
      collect_a64_resolver_targets(code, symbol.value, symbol.size, targets);
    }
  }
  const auto boundaries = detail::function_stretches(symbols, code, resolvers, targets, no_a64_runtime_dispatch);
  std::vector<std::vector<InstructionUse>> usage(boundaries.size());

  CodeScan scan;
  std::size_t current = 0;
  for (const auto& part : code) {
    for (const auto run : a64_instruction_runs(part, symbols)) {
      const auto run_address = part.address + static_cast<std::uint64_t>(run.data() - part.bytes.data());
      for (std::size_t offset = 0; offset + a64_instruction_size <= run.size(); offset += a64_instruction_size) {
        const auto word = a64_word_at(run, offset);
        if (encoding_group(word) != group_sve) continue;
        const auto address = run_address + offset;
        while (current + 1 < boundaries.size() && boundaries[current + 1].address <= address) ++current;
        // Boundaries are sorted by address and so are the sections' runs: `current` only moves on.
        if (auto& used = usage[current]; used.empty()) {
          used.push_back({address, fmt::format("SVE instruction {:#010x}", word), {"sve"}});
        }
      }
    }
    scan.bytes += part.bytes.size();
  }
  for (std::size_t i = 0; i < boundaries.size(); ++i) {
    if (usage[i].empty()) continue;
    const auto& boundary = boundaries[i];
    scan.functions.push_back({detail::stretch_name(boundary), boundary.address, boundary.dispatch, {},
                              std::move(usage[i])});
  }
  return scan;
}

}  // namespace hwimg::hw
