#include "hwimg/hw/detail/x86_dispatch.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace hwimg::hw::detail {
namespace {

constexpr std::uint32_t reloc_x86_64_64 = 1;         // R_X86_64_64
constexpr std::uint32_t reloc_x86_64_glob_dat = 6;   // R_X86_64_GLOB_DAT
constexpr std::uint32_t reloc_x86_64_relative = 8;   // R_X86_64_RELATIVE
constexpr std::uint16_t elf_type_executable = 2;     // ET_EXEC: linked at fixed addresses
constexpr std::uint64_t pointer_size = 8;
constexpr std::size_t no_boundary = std::numeric_limits<std::size_t>::max();

// What __builtin_cpu_supports/__builtin_cpu_is read (libgcc's cpuinfo, compiler-rt's cpu_model).
bool is_cpu_model(std::string_view name) { return name == "__cpu_model" || name == "__cpu_features2"; }

// Code that is only run after a check, so that what it refers to is too.
bool runs_after_check(CodeDispatch dispatch) {
  return dispatch == CodeDispatch::multiversion || dispatch == CodeDispatch::ifunc_target ||
         dispatch == CodeDispatch::runtime_library || dispatch == CodeDispatch::after_cpu_check;
}

std::size_t boundary_at(std::span<const CodeBoundary> boundaries, std::uint64_t address) {
  const auto after = std::ranges::upper_bound(boundaries, address, {}, &CodeBoundary::address);
  return after == boundaries.begin() ? no_boundary : static_cast<std::size_t>(after - boundaries.begin() - 1);
}

struct Edge {
  std::size_t from = 0;
  std::size_t to = 0;
  bool after_check = false;  // the reference follows a CPU check in its own function
};

}  // namespace

std::string boundary_name(const CodeBoundary& boundary) {
  return boundary.name.empty() ? fmt::format("code at {:#x}", boundary.address) : boundary.name;
}

CpuCheckData::CpuCheckData(std::span<const ElfSymbol> symbols, std::span<const ElfRelocation> relocations,
                           std::uint16_t elf_type, std::uint64_t code_begin, std::uint64_t code_end)
    : m_code_begin(code_begin), m_code_end(code_end), m_absolute(elf_type == elf_type_executable) {
  for (const auto& symbol : symbols) {
    if (symbol.section == 0) continue;
    if (is_cpu_model(symbol.name)) {
      m_data.push_back({symbol.value, symbol.value + std::max<std::uint64_t>(symbol.size, 1)});
    }
    if (symbol.name == "__cpu_indicator_init" && symbol.type == ElfSymbolType::function) {
      m_indicator_init = symbol.value;
    }
  }
  // Without linker relaxation (or from libgcc_s) the address is loaded from a GOT slot: one the
  // dynamic linker fills with the symbol, or with the load address plus the object's.
  const auto objects = m_data;
  for (const auto& relocation : relocations) {
    const bool named = (relocation.type == reloc_x86_64_glob_dat || relocation.type == reloc_x86_64_64) &&
                       is_cpu_model(relocation.symbol);
    const auto target = static_cast<std::uint64_t>(relocation.addend);
    const bool relative = relocation.type == reloc_x86_64_relative &&
                          std::ranges::any_of(objects, [&](const Range& range) { return range.holds(target); });
    if (named || relative) m_data.push_back({relocation.offset, relocation.offset + pointer_size});
  }
}

bool CpuCheckData::is_cpu_data(std::uint64_t address) const {
  return std::ranges::any_of(m_data, [&](const Range& range) { return range.holds(address); });
}

void CpuCheckData::note(const ZydisDecodedInstruction& instruction, std::uint64_t address, std::uint64_t function,
                        std::uint64_t function_end, DispatchNotes& notes) const {
  if (instruction.mnemonic == ZYDIS_MNEMONIC_CPUID) {
    notes.checks.push_back(address);
    return;
  }
  const auto next = address + instruction.length;
  const auto outside = [&](std::uint64_t target) { return target < function || target >= function_end; };
  const auto& raw = instruction.raw;
  if (raw.imm[0].is_relative) {
    const auto target = next + static_cast<std::uint64_t>(raw.imm[0].value.s);
    if (instruction.mnemonic == ZYDIS_MNEMONIC_CALL && m_indicator_init != 0 && target == m_indicator_init) {
      notes.checks.push_back(address);
    } else if (outside(target)) {
      notes.references.push_back({address, target});
    }
    return;
  }
  // In 64-bit mode ModRM mod 0, r/m 5 with a 32-bit displacement is RIP-relative; register-only
  // encodings that reuse those bits read no displacement.
  if ((instruction.attributes & ZYDIS_ATTRIB_HAS_MODRM) != 0 && raw.modrm.mod == 0 && raw.modrm.rm == 5 &&
      raw.disp.size == 32) {
    const auto target = next + static_cast<std::uint64_t>(raw.disp.value);
    if (is_cpu_data(target)) {
      notes.checks.push_back(address);
    } else if (instruction.mnemonic == ZYDIS_MNEMONIC_LEA && target >= m_code_begin && target < m_code_end &&
               outside(target)) {
      notes.references.push_back({address, target});
    }
    return;
  }
  // GCC addresses __cpu_model with `mov $__cpu_model, %rax` in a static executable.
  if (m_absolute && !m_data.empty() &&
      ((raw.imm[0].size >= 32 && is_cpu_data(raw.imm[0].value.u)) ||
       (raw.disp.size == 32 && is_cpu_data(static_cast<std::uint64_t>(raw.disp.value))))) {
    notes.checks.push_back(address);
  }
}

std::vector<BoundaryDispatch> resolve_dispatch(std::span<const CodeBoundary> boundaries,
                                               std::span<const std::uint64_t> first_use, DispatchNotes notes) {
  const auto count = boundaries.size();
  std::vector<BoundaryDispatch> result(count);
  for (std::size_t i = 0; i < count; ++i) result[i].dispatch = boundaries[i].dispatch;
  // A stretch between symbols has no known start, so a check in it vouches for nothing.
  std::vector<std::uint64_t> first_check(count, no_address);
  for (const auto check : notes.checks) {
    const auto at = boundary_at(boundaries, check);
    if (at != no_boundary && boundaries[at].starts_function) first_check[at] = std::min(first_check[at], check);
  }
  // References to a function's first instruction from elsewhere; data addresses never equal one.
  std::vector<Edge> edges;
  for (const auto& reference : notes.references) {
    const auto to = boundary_at(boundaries, reference.to);
    if (to == no_boundary || boundaries[to].address != reference.to || !boundaries[to].starts_function) continue;
    const auto from = boundary_at(boundaries, reference.from);
    if (from == no_boundary || from == to) continue;
    edges.push_back({from, to, reference.from > first_check[from]});
  }
  notes = {};
  std::ranges::sort(edges, {}, &Edge::from);

  // The least fixpoint: a function counts once all its references are vouched for, so code only
  // reachable through itself (a cycle) is not taken as dispatched.
  std::vector<std::size_t> references(count, 0);
  std::vector<std::size_t> unvouched(count, 0);
  std::vector<std::string> vouched_by(count);
  const auto vouch = [&](const Edge& edge) {
    if (!vouched_by[edge.to].empty()) return;
    const auto& from = result[edge.from];
    vouched_by[edge.to] = edge.after_check || from.dispatched_by.empty() ? boundary_name(boundaries[edge.from])
                                                                          : from.dispatched_by;
  };
  for (const auto& edge : edges) {
    ++references[edge.to];
    if (edge.after_check || runs_after_check(result[edge.from].dispatch)) {
      vouch(edge);
    } else {
      ++unvouched[edge.to];
    }
  }
  const auto candidate = [&](std::size_t i) {
    return result[i].dispatch == CodeDispatch::none && boundaries[i].linkage == Linkage::internal &&
           references[i] > 0 && unvouched[i] == 0;
  };
  std::vector<std::size_t> work;
  for (std::size_t i = 0; i < count; ++i) {
    if (candidate(i)) work.push_back(i);
  }
  while (!work.empty()) {
    const auto next = work.back();
    work.pop_back();
    if (!candidate(next)) continue;
    result[next] = {CodeDispatch::after_cpu_check, vouched_by[next]};
    const auto first = std::ranges::lower_bound(edges, next, {}, &Edge::from);
    for (auto edge = first; edge != edges.end() && edge->from == next; ++edge) {
      if (edge->after_check) continue;
      vouch(*edge);
      --unvouched[edge->to];
      if (candidate(edge->to)) work.push_back(edge->to);
    }
  }

  for (std::size_t i = 0; i < count; ++i) {
    if (result[i].dispatch == CodeDispatch::none && first_check[i] != no_address && i < first_use.size() &&
        first_use[i] != no_address && first_use[i] > first_check[i]) {
      result[i] = {CodeDispatch::own_cpu_check, boundary_name(boundaries[i])};
    }
  }
  return result;
}

}  // namespace hwimg::hw::detail
