#include "hwimg/hw/x86_isa_scan.hpp"

#include <algorithm>
#include <array>
#include <exception>
#include <functional>
#include <set>
#include <unordered_set>

#include "hwimg/hw/detail/x86_dispatch.hpp"
#include "hwimg/hw/detail/code_layout.hpp"
#include "hwimg/hw/detail/x86_chunk_scan.hpp"
#include "hwimg/hw/detail/zydis_library.hpp"
#include "hwimg/hw/elf.hpp"
#include "hwimg/hw/elf_machine.hpp"
#include "hwimg/hw/gnu_property.hpp"

namespace hwimg::hw {
namespace {

constexpr std::uint32_t r_x86_64_irelative = 37;  // x86-64 psABI, "Relocation Types"

using Code = detail::CodeRange;
using detail::code_bytes_at;
using detail::is_code_address;
using detail::is_defined_function;
using detail::unsized_resolver_bytes;

using detail::CodeBoundary;
using detail::Linkage;
using detail::no_address;

// The code addresses a resolver loads (RIP-relative LEA, MOV of an immediate): the versions it
// chooses between. Calls (to __cpu_indicator_init) are not among them.
void collect_resolver_targets(const detail::ZydisLibrary& zydis, const ZydisDecoder& decoder, std::span<const Code> code, std::uint64_t start,
                              std::uint64_t size, std::set<std::uint64_t>& targets) {
  const auto bytes = code_bytes_at(code, start, size == 0 ? unsized_resolver_bytes : size);
  ZydisDecodedInstruction instruction;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  for (std::size_t offset = 0; offset < bytes.size();) {
    if (!ZYAN_SUCCESS(zydis.decode_full(&decoder, bytes.data() + offset, bytes.size() - offset, &instruction,
                                             operands))) {
      ++offset;
      continue;
    }
    const auto address = start + offset;
    offset += instruction.length;
    if (instruction.mnemonic != ZYDIS_MNEMONIC_LEA && instruction.mnemonic != ZYDIS_MNEMONIC_MOV) continue;
    for (std::size_t i = 0; i < instruction.operand_count_visible; ++i) {
      const auto& operand = operands[i];
      ZyanU64 target = 0;
      if (operand.type == ZYDIS_OPERAND_TYPE_MEMORY && operand.mem.base == ZYDIS_REGISTER_RIP &&
          instruction.mnemonic == ZYDIS_MNEMONIC_LEA) {
        if (!ZYAN_SUCCESS(zydis.calc_absolute_address(&instruction, &operand, address, &target))) continue;
      } else if (operand.type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
        target = operand.imm.value.u;
      } else {
        continue;
      }
      if (is_code_address(code, target)) targets.insert(target);
    }
  }
}

// Functions of glibc and libstdc++ that a static program carries and that run only after the
// library's own CPUID check (docs/compatibility.md#instruction-sets): lock elision (RTM), the lazy
// binding trampolines chosen by XSAVE/XSAVEC/AVX-512 support, std::random_device's RDRAND/RDSEED.
bool is_runtime_dispatched(std::string_view name) {
  static constexpr std::array<std::string_view, 4> prefixes{
      "__lll_lock_elision", "__lll_unlock_elision", "__lll_trylock_elision", "_dl_runtime_"};
  static constexpr std::array<std::string_view, 3> libstdcxx{"__x86_rdrand", "__x86_rdseed", "__x86_rdseed_rdrand"};
  for (const auto prefix : prefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return name.starts_with("_ZNSt12_GLOBAL__N_1") &&
         std::ranges::any_of(libstdcxx, [&](std::string_view part) { return name.find(part) != std::string_view::npos; });
}

// The functions, the gaps between them and the unnamed IFUNC targets, sorted by address.
std::vector<CodeBoundary> make_boundaries(std::span<const ElfSymbol> symbols, std::span<const Code> code,
                                      const std::set<std::uint64_t>& resolvers,
                                      const std::set<std::uint64_t>& targets) {
  // GCC and Clang name a version "f.SUFFIX" next to "f.resolver" and an IFUNC "f" (GCC 12:
  // f.avx2, f.arch_x86_64_v3, f.sse4_2, f.default; Clang: f.avx2.0, f.default.2).
  std::unordered_set<std::string_view> versioned;
  for (const auto& symbol : symbols) {
    if (symbol.type == ElfSymbolType::gnu_ifunc) versioned.insert(symbol.name);
    if (symbol.name.ends_with(".resolver")) versioned.insert(std::string_view(symbol.name).substr(0, symbol.name.size() - 9));
  }
  const auto dispatch_of = [&](const ElfSymbol& symbol) {
    if (resolvers.contains(symbol.value)) return CodeDispatch::resolver;
    const auto dot = symbol.name.find('.');
    if (dot != std::string::npos && versioned.contains(std::string_view(symbol.name).substr(0, dot))) {
      return CodeDispatch::multiversion;
    }
    if (targets.contains(symbol.value)) return CodeDispatch::ifunc_target;
    return is_runtime_dispatched(symbol.name) ? CodeDispatch::runtime_library : CodeDispatch::none;
  };
  std::vector<CodeBoundary> boundaries;
  for (const auto& part : code) boundaries.push_back({part.address, false, {}, CodeDispatch::none, Linkage::internal});
  std::set<std::uint64_t> named;
  std::set<std::uint64_t> exported;
  for (const auto& symbol : symbols) {
    if (!is_defined_function(symbol) || !is_code_address(code, symbol.value)) continue;
    named.insert(symbol.value);
    if (symbol.table == ElfSymbolTable::dynsym) exported.insert(symbol.value);
    boundaries.push_back({symbol.value, true, symbol.name, dispatch_of(symbol), Linkage::internal});
    if (symbol.size > 0) {
      boundaries.push_back({symbol.value + symbol.size, false, {}, CodeDispatch::none, Linkage::internal});
    }
  }
  for (const auto target : targets) {
    if (!named.contains(target)) boundaries.push_back({target, true, {}, CodeDispatch::ifunc_target, Linkage::internal});
  }
  // At one address a function start wins over a gap, and a dispatched alias over the others.
  std::ranges::stable_sort(boundaries, [](const CodeBoundary& a, const CodeBoundary& b) {
    if (a.address != b.address) return a.address < b.address;
    if (a.starts_function != b.starts_function) return a.starts_function;
    return is_dispatched(a.dispatch) && !is_dispatched(b.dispatch);
  });
  const auto same_place = [](const CodeBoundary& a, const CodeBoundary& b) { return a.address == b.address; };
  boundaries.erase(std::unique(boundaries.begin(), boundaries.end(), same_place), boundaries.end());
  // An alias in .dynsym makes the function callable from other objects, unseen by the scan.
  for (auto& boundary : boundaries) {
    if (boundary.starts_function && exported.contains(boundary.address)) boundary.linkage = Linkage::exported;
  }
  return boundaries;
}

}  // namespace

Result<CodeScan> scan_x86_isa(std::span<const std::byte> bytes, std::string_view name, ScanThreads threads) {
  HWIMG_TRY_ASSIGN(const auto header, read_elf_header(bytes, name));
  if (header.machine != elf_machine_x86_64) {
    return fail("failed to scan the instructions of {}: it is for {}, not x86-64", name,
                elf_machine_name(header.machine));
  }
  HWIMG_TRY_ASSIGN(const auto sections, read_elf_sections(bytes, name));
  HWIMG_TRY_ASSIGN(const auto symbols, read_elf_symbols(bytes, sections, name));
  HWIMG_TRY_ASSIGN(const auto relocations, read_elf_relocations(bytes, sections, name));
  CodeScan scan;
  HWIMG_TRY_ASSIGN(scan.needed_level, read_x86_isa_needed(bytes, sections, name));

  const auto code = detail::executable_code(bytes, sections);
  const detail::CpuCheckData cpu_checks(symbols, relocations, header.type, code.empty() ? 0 : code.front().address,
                                        code.empty() ? 0 : code.back().address + code.back().bytes.size());

  HWIMG_TRY_ASSIGN(const auto* zydis, with_context(detail::load_zydis(), "failed to scan the instructions of " + std::string(name)));
  ZydisDecoder decoder;
  if (!ZYAN_SUCCESS(zydis->decoder_init(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64))) {
    return fail("failed to scan the instructions of {}: Zydis could not set up its 64-bit decoder", name);
  }
  std::set<std::uint64_t> resolvers;
  std::set<std::uint64_t> targets;
  for (const auto& symbol : symbols) {
    if (symbol.type == ElfSymbolType::gnu_ifunc && is_defined_function(symbol)) {
      resolvers.insert(symbol.value);
      collect_resolver_targets(*zydis, decoder, code, symbol.value, symbol.size, targets);
    }
  }
  // A static executable calls its IFUNC resolvers through R_X86_64_IRELATIVE relocations, whose
  // addend is the resolver: stripped, that is all there is to find glibc's string functions by.
  for (const auto& relocation : relocations) {
    const auto resolver = static_cast<std::uint64_t>(relocation.addend);
    if (relocation.type == r_x86_64_irelative && is_code_address(code, resolver) && resolvers.insert(resolver).second) {
      collect_resolver_targets(*zydis, decoder, code, resolver, 0, targets);
    }
  }
  const auto boundaries = make_boundaries(symbols, code, resolvers, targets);

  // The main loop needs the ISA set, the length and the raw fields only: Zydis's minimal mode
  // gives those without the semantic analysis, in two thirds of the time.
  ZydisDecoder fast = decoder;
  if (!ZYAN_SUCCESS(zydis->decoder_enable_mode(&fast, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE))) {
    return fail("failed to scan the instructions of {}: Zydis has no minimal decoder mode", name);
  }
  const detail::ChunkContext context{zydis, &fast, code, boundaries, &cpu_checks};
  auto* pool = threads.pool;
  const auto workers = pool != nullptr ? pool->size() : 1U;
  const auto chunks = detail::split_code(code, std::size_t{4} * workers, threads.min_chunk_bytes);
  std::vector<detail::ChunkScan> chunk_scans(chunks.size());
  if (pool != nullptr && chunks.size() > 1) {
    // Whatever a chunk throws (bad_alloc) is thrown again here, on the caller's thread.
    std::vector<std::exception_ptr> thrown(chunks.size());
    std::vector<std::function<void()>> tasks;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      tasks.emplace_back([&, i] {
        try {
          chunk_scans[i] = detail::scan_chunk(context, chunks[i]);
        } catch (...) {
          thrown[i] = std::current_exception();
        }
      });
    }
    pool->run_all(std::move(tasks));
    for (const auto& error : thrown) {
      if (error) std::rethrow_exception(error);
    }
  } else {
    for (std::size_t i = 0; i < chunks.size(); ++i) chunk_scans[i] = detail::scan_chunk(context, chunks[i]);
  }
  auto merged = detail::merge_chunks(chunks, std::move(chunk_scans), boundaries.size());
  for (const auto& part : code) scan.bytes += part.bytes.size();
  auto& usage = merged.uses;
  auto& notes = merged.notes;
  std::vector<std::uint64_t> first_use(boundaries.size(), no_address);
  for (std::size_t i = 0; i < boundaries.size(); ++i) {
    for (const auto& use : usage[i]) first_use[i] = std::min(first_use[i], use.address);
  }
  auto dispatch = detail::resolve_dispatch(boundaries, first_use, std::move(notes));
  for (std::size_t i = 0; i < boundaries.size(); ++i) {
    if (usage[i].empty()) continue;
    const auto& boundary = boundaries[i];
    scan.functions.push_back({detail::boundary_name(boundary), boundary.address, dispatch[i].dispatch,
                              std::move(dispatch[i].dispatched_by), std::move(usage[i])});
  }
  return scan;
}

}  // namespace hwimg::hw
