#include "hwimg/hw/detail/code_layout.hpp"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

namespace hwimg::hw::detail {
namespace {

constexpr std::uint16_t first_reserved_section = 0xff00;  // SHN_LORESERVE
constexpr std::string_view resolver_suffix = ".resolver";

}  // namespace

std::vector<CodeRange> executable_code(std::span<const std::byte> bytes, std::span<const ElfSection> sections) {
  std::vector<CodeRange> code;
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const auto& section = sections[i];
    if (section.is_executable() && section.type != elf_section_nobits && section.size > 0) {
      code.push_back({section.address, bytes.subspan(section.offset, section.size), i});
    }
  }
  std::ranges::sort(code, {}, &CodeRange::address);
  return code;
}

std::span<const std::byte> code_bytes_at(std::span<const CodeRange> code, std::uint64_t address, std::uint64_t size) {
  for (const auto& part : code) {
    if (address >= part.address && address - part.address < part.bytes.size()) {
      const auto offset = address - part.address;
      return part.bytes.subspan(offset, std::min(size, part.bytes.size() - offset));
    }
  }
  return {};
}

bool is_code_address(std::span<const CodeRange> code, std::uint64_t address) { return !code_bytes_at(code, address, 1).empty(); }

bool is_defined_function(const ElfSymbol& symbol) {
  return (symbol.type == ElfSymbolType::function || symbol.type == ElfSymbolType::gnu_ifunc) && symbol.section != 0 &&
         symbol.section < first_reserved_section;
}

std::vector<CodeStretch> function_stretches(std::span<const ElfSymbol> symbols, std::span<const CodeRange> code,
                                          const std::set<std::uint64_t>& resolvers,
                                          const std::set<std::uint64_t>& targets,
                                          RuntimeDispatchRule runtime_dispatched) {
  // GCC and Clang name a version "f.SUFFIX" next to "f.resolver" and an IFUNC "f" (GCC 12 x86:
  // f.avx2, f.arch_x86_64_v3, f.sse4_2, f.default; Clang: f.avx2.0, f.default.2; AArch64 function
  // multi-versioning: f._Msve2, f.default).
  std::unordered_set<std::string_view> versioned;
  for (const auto& symbol : symbols) {
    if (symbol.type == ElfSymbolType::gnu_ifunc) versioned.insert(symbol.name);
    if (symbol.name.ends_with(resolver_suffix)) {
      versioned.insert(std::string_view(symbol.name).substr(0, symbol.name.size() - resolver_suffix.size()));
    }
  }
  const auto dispatch_of = [&](const ElfSymbol& symbol) {
    if (resolvers.contains(symbol.value)) return CodeDispatch::resolver;
    const auto dot = symbol.name.find('.');
    if (dot != std::string::npos && versioned.contains(std::string_view(symbol.name).substr(0, dot))) {
      return CodeDispatch::multiversion;
    }
    if (targets.contains(symbol.value)) return CodeDispatch::ifunc_target;
    return runtime_dispatched(symbol.name) ? CodeDispatch::runtime_library : CodeDispatch::none;
  };
  std::vector<CodeStretch> boundaries;
  for (const auto& part : code) boundaries.push_back({part.address, false, {}, CodeDispatch::none});
  std::set<std::uint64_t> named;
  for (const auto& symbol : symbols) {
    if (!is_defined_function(symbol) || !is_code_address(code, symbol.value)) continue;
    named.insert(symbol.value);
    boundaries.push_back({symbol.value, true, symbol.name, dispatch_of(symbol)});
    if (symbol.size > 0) boundaries.push_back({symbol.value + symbol.size, false, {}, CodeDispatch::none});
  }
  for (const auto target : targets) {
    if (!named.contains(target)) boundaries.push_back({target, true, {}, CodeDispatch::ifunc_target});
  }
  // At one address a function start wins over a gap, and a dispatched alias over the others.
  std::ranges::stable_sort(boundaries, [](const CodeStretch& a, const CodeStretch& b) {
    if (a.address != b.address) return a.address < b.address;
    if (a.starts_function != b.starts_function) return a.starts_function;
    return is_dispatched(a.dispatch) && !is_dispatched(b.dispatch);
  });
  const auto same_place = [](const CodeStretch& a, const CodeStretch& b) { return a.address == b.address; };
  boundaries.erase(std::unique(boundaries.begin(), boundaries.end(), same_place), boundaries.end());
  return boundaries;
}

std::string stretch_name(const CodeStretch& boundary) {
  return boundary.name.empty() ? fmt::format("code at {:#x}", boundary.address) : boundary.name;
}

}  // namespace hwimg::hw::detail
