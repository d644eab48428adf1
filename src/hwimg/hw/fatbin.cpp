#include "hwimg/hw/fatbin.hpp"

#include <algorithm>

#include "hwimg/hw/elf.hpp"
#include "hwimg/hw/fatbin_payload.hpp"

namespace hwimg::hw {

namespace {

constexpr std::uint32_t container_magic = 0xBA55ED50;
constexpr std::uint64_t container_header_size = 16;
constexpr std::uint64_t entry_header_size = 64;

constexpr std::uint64_t flag_lz4 = 0x2000;
constexpr std::uint64_t flag_zstd = 0x8000;
constexpr std::uint64_t flag_arch_specific = 0x100000;
constexpr std::uint64_t flag_family = 0x200000;

// The SM number a cubin's e_flags carry: bits 8-15 from ABI version 8 (CUDA 13), the low byte
// before (docs/compatibility.md#cubin-elf-header).
int cubin_sm(const ElfHeader& header) {
  return static_cast<int>(header.abi_version >= 8 ? (header.flags >> 8) & 0xff : header.flags & 0xff);
}

constexpr std::uint32_t section_symtab = 2;  // SHT_SYMTAB
constexpr std::uint64_t symbol_size = 24;
constexpr std::uint8_t symbol_function = 2;  // STT_FUNC

// Whether a cubin defines functions; device-link stubs do not (docs/compatibility.md#fatbin-sections).
Result<bool> cubin_has_functions(std::span<const std::byte> cubin, std::string_view cubin_name) {
  HWIMG_TRY_ASSIGN(const auto sections, read_elf_sections(cubin, cubin_name));
  for (const auto& section : sections) {
    if (section.type != section_symtab) {
      continue;
    }
    for (std::uint64_t at = section.offset; at + symbol_size <= section.offset + section.size; at += symbol_size) {
      if ((read_le<std::uint8_t>(cubin, at + 4) & 0xf) == symbol_function) {
        return true;
      }
    }
  }
  return false;
}

// Checks a (decompressed) cubin against its entry header; returns whether it holds kernels.
Result<bool> check_cubin(std::span<const std::byte> payload, const FatbinEntry& entry, std::uint64_t payload_offset,
                         std::string_view name) {
  const auto cubin_name = fmt::format("{} (cubin at offset {})", name, payload_offset);
  HWIMG_TRY_ASSIGN(const auto header, read_elf_header(payload, cubin_name));
  if (header.machine != elf_machine_cuda) {
    return fail("failed to read fatbin in {}: the cubin at offset {} has ELF machine {}, not EM_CUDA (190)", name,
                payload_offset, header.machine);
  }
  if (cubin_sm(header) != entry.arch) {
    return fail("failed to read fatbin in {}: the entry at offset {} says {} but its cubin is for sm_{}", name,
                entry.offset, entry.target().name(), cubin_sm(header));
  }
  return cubin_has_functions(payload, cubin_name);
}

// The word after a PTX directive (".target sm_90a, debug" -> "sm_90a"), empty when absent.
std::string_view ptx_directive(std::string_view ptx, std::string_view directive) {
  const auto at = ptx.find(directive);
  if (at == std::string_view::npos) {
    return {};
  }
  const auto rest = ptx.substr(at + directive.size());
  return rest.substr(0, rest.find_first_of(" ,\t\r\n"));
}

// The PTX text must target what its entry header says (".target sm_90a" for compute_90a); its
// ".version" is the PTX ISA a driver's JIT must know.
Result<void> check_ptx(std::span<const std::byte> text, FatbinEntry& entry, std::string_view name) {
  const std::string_view ptx(reinterpret_cast<const char*>(text.data()), text.size());
  const auto target = ptx_directive(ptx, ".target ");
  auto expected = entry.target().name();
  expected.replace(0, std::string_view("compute").size(), "sm");
  if (target != expected) {
    return fail("failed to read fatbin in {}: the PTX of the entry at offset {} targets '{}' but the entry says {}",
                name, entry.offset, target, entry.target().name());
  }
  entry.ptx_isa = std::string(ptx_directive(ptx, ".version "));
  return {};
}

constexpr std::uint8_t compat_arch_specific = 9;  // .nv.compat attribute: 1 for an `a` target (observed)

// Whether a cubin's `.nv.compat` records mark it arch-specific. Records are a format byte, an
// attribute byte and a value: 2 bytes (format 1), a 2-byte value (2, 3) or a 2-byte size and data (4).
bool cubin_is_arch_specific(std::span<const std::byte> cubin, const std::vector<ElfSection>& sections) {
  const auto compat = std::ranges::find(sections, ".nv.compat", &ElfSection::name);
  if (compat == sections.end() || compat->type == elf_section_nobits) {
    return false;
  }
  const auto records = cubin.subspan(compat->offset, compat->size);
  for (std::uint64_t at = 0; at + 2 <= records.size();) {
    const auto format = read_le<std::uint8_t>(records, at);
    const auto attribute = read_le<std::uint8_t>(records, at + 1);
    if (format == 1) {
      at += 2;
      continue;
    }
    if ((format < 2 || format > 4) || at + 4 > records.size()) {
      return false;
    }
    if (format != 4 && attribute == compat_arch_specific) {
      return read_le<std::uint8_t>(records, at + 2) == 1;
    }
    at += 4 + (format == 4 ? read_le<std::uint16_t>(records, at + 2) : 0U);
  }
  return false;
}

Result<FatbinEntry> parse_entry(std::span<const std::byte> data, std::uint64_t at, std::uint64_t end,
                                std::uint64_t base_offset, std::string_view name, std::uint64_t& next) {
  const auto where = base_offset + at;
  if (end - at < entry_header_size) {
    return fail("failed to read fatbin in {}: entry header at offset {} runs beyond its container", name, where);
  }
  const auto kind = read_le<std::uint16_t>(data, at);
  const auto header_size = read_le<std::uint32_t>(data, at + 4);
  const auto payload_size = read_le<std::uint64_t>(data, at + 8);
  const auto compressed_size = read_le<std::uint32_t>(data, at + 16);
  FatbinEntry entry;
  entry.arch = static_cast<int>(read_le<std::uint32_t>(data, at + 28));
  entry.flags = read_le<std::uint64_t>(data, at + 40);
  entry.offset = where;
  if (header_size < entry_header_size) {
    return fail("failed to read fatbin in {}: entry at offset {} has a {}-byte header, less than 64", name, where,
                header_size);
  }
  if (header_size > end - at || payload_size > end - at - header_size) {
    return fail("failed to read fatbin in {}: entry at offset {} (header {} bytes, payload {} bytes) runs beyond "
                "its container",
                name, where, header_size, payload_size);
  }
  if (compressed_size > payload_size) {
    return fail("failed to read fatbin in {}: entry at offset {} claims {} compressed bytes in a {}-byte payload",
                name, where, compressed_size, payload_size);
  }
  switch (kind) {
    case 1: entry.kind = FatbinEntryKind::ptx; break;
    case 2: entry.kind = FatbinEntryKind::sass; break;
    case 8: entry.kind = FatbinEntryKind::lto_ir; break;
    default: return fail("failed to read fatbin in {}: entry at offset {} has unknown kind {}", name, where, kind);
  }
  if ((entry.flags & flag_lz4) && (entry.flags & flag_zstd)) {
    return fail("failed to read fatbin in {}: entry at offset {} claims two compressions (flags {:#x})", name,
                where, entry.flags);
  }
  if ((entry.flags & flag_arch_specific) && (entry.flags & flag_family)) {
    return fail("failed to read fatbin in {}: entry at offset {} is both arch-specific and family (flags {:#x})",
                name, where, entry.flags);
  }
  if (entry.arch < 10 || entry.arch > 999) {
    return fail("failed to read fatbin in {}: entry at offset {} has invalid architecture {}", name, where,
                entry.arch);
  }
  entry.features = (entry.flags & flag_arch_specific) ? ArchFeatures::arch_specific
                   : (entry.flags & flag_family)     ? ArchFeatures::family
                                                     : ArchFeatures::baseline;
  if (entry.kind != FatbinEntryKind::lto_ir) {
    const auto compression = (entry.flags & flag_zstd) ? PayloadCompression::zstd
                             : (entry.flags & flag_lz4) ? PayloadCompression::lz4
                                                        : PayloadCompression::none;
    const auto payload = data.subspan(at + header_size, compression == PayloadCompression::none ? payload_size
                                                                                                : compressed_size);
    HWIMG_TRY_ASSIGN(const auto content,
                     decompress_payload(payload, compression, read_le<std::uint64_t>(data, at + 56), name, where));
    if (entry.kind == FatbinEntryKind::ptx) {
      HWIMG_TRY(check_ptx(content, entry, name));
    } else {
      HWIMG_TRY_ASSIGN(const bool has_functions, check_cubin(content, entry, where + header_size, name));
      entry.link_stub = !has_functions;
    }
  }
  next = at + header_size + payload_size;
  return entry;
}

}  // namespace

GpuTarget FatbinEntry::target() const {
  return {kind == FatbinEntryKind::ptx ? CodeKind::ptx : CodeKind::sass, {arch / 10, arch % 10}, features};
}

Result<std::vector<FatbinEntry>> parse_fatbin(std::span<const std::byte> data, std::uint64_t base_offset,
                                              std::string_view name) {
  std::vector<FatbinEntry> entries;
  std::uint64_t at = 0;
  while (at < data.size()) {
    // Containers start 8-byte aligned; the gaps between them are zero.
    if (data.size() - at < 4 || read_le<std::uint32_t>(data, at) == 0) {
      const auto rest = data.subspan(at, std::min<std::uint64_t>(8, data.size() - at));
      if (std::ranges::all_of(rest, [](std::byte b) { return b == std::byte{0}; })) {
        at += rest.size();
        continue;
      }
    }
    const auto where = base_offset + at;
    if (data.size() - at < container_header_size) {
      return fail("failed to read fatbin in {}: container header at offset {} runs beyond the section", name, where);
    }
    const auto magic = read_le<std::uint32_t>(data, at);
    const auto version = read_le<std::uint16_t>(data, at + 4);
    const auto header_size = read_le<std::uint16_t>(data, at + 6);
    const auto fat_size = read_le<std::uint64_t>(data, at + 8);
    if (magic != container_magic) {
      return fail("failed to read fatbin in {}: no fatbin magic at offset {} (found {:#010x})", name, where, magic);
    }
    if (version != 1 || header_size != container_header_size) {
      return fail("failed to read fatbin in {}: container at offset {} has version {} and header size {}, not 1 "
                  "and 16",
                  name, where, version, header_size);
    }
    if (fat_size > data.size() - at - container_header_size) {
      return fail("failed to read fatbin in {}: container at offset {} claims {} bytes, beyond the end of the "
                  "section",
                  name, where, fat_size);
    }
    const auto end = at + container_header_size + fat_size;
    for (auto entry_at = at + container_header_size; entry_at < end;) {
      HWIMG_TRY_ASSIGN(entries.emplace_back(), parse_entry(data, entry_at, end, base_offset, name, entry_at));
      entries.back().container = where;
    }
    at = (end + 7) / 8 * 8;
  }
  return entries;
}

Result<std::vector<FatbinEntry>> read_fatbin_entries(std::span<const std::byte> elf, std::string_view name,
                                                     FatbinSections sections) {
  HWIMG_TRY_ASSIGN(const auto all, read_elf_sections(elf, name));
  const std::string_view wanted = sections == FatbinSections::loaded ? ".nv_fatbin" : "__nv_relfatbin";
  std::vector<FatbinEntry> entries;
  for (const auto& section : all) {
    if (section.name != wanted || section.type == elf_section_nobits) {
      continue;
    }
    HWIMG_TRY_ASSIGN(const auto found, parse_fatbin(elf.subspan(section.offset, section.size), section.offset, name));
    std::ranges::copy(found, std::back_inserter(entries));
  }
  return entries;
}

Result<std::vector<FatbinEntry>> read_fatbin_entries(std::span<const std::byte> elf, std::string_view name) {
  HWIMG_TRY_ASSIGN(const auto sections, read_elf_sections(elf, name));
  // What the runtime loads is in .nv_fatbin; __nv_relfatbin keeps the -rdc objects for a later
  // device link (an executable's PTX there can never be JIT-compiled), so it counts only in files
  // that have nothing else, such as `nvcc -dc` objects.
  const bool loadable = std::ranges::any_of(sections, [](const ElfSection& s) { return s.name == ".nv_fatbin"; });
  return read_fatbin_entries(elf, name, loadable ? FatbinSections::loaded : FatbinSections::relocatable);
}

Result<std::optional<GpuTarget>> read_cubin_target(std::span<const std::byte> cubin, std::string_view name) {
  HWIMG_TRY_ASSIGN(const auto header, read_elf_header(cubin, name));
  if (header.machine != elf_machine_cuda) {
    return fail("failed to read cubin {}: ELF machine {}, not EM_CUDA (190)", name, header.machine);
  }
  HWIMG_TRY_ASSIGN(const bool has_functions, cubin_has_functions(cubin, name));
  if (!has_functions) {
    return std::optional<GpuTarget>();
  }
  HWIMG_TRY_ASSIGN(const auto sections, read_elf_sections(cubin, name));
  const int sm = cubin_sm(header);
  if (sm < 10) {
    return fail("failed to read cubin {}: invalid architecture {} in its ELF flags {:#x}", name, sm, header.flags);
  }
  return std::optional<GpuTarget>(GpuTarget{CodeKind::sass, {sm / 10, sm % 10},
                                            cubin_is_arch_specific(cubin, sections) ? ArchFeatures::arch_specific
                                                                                    : ArchFeatures::baseline});
}

Result<GpuTarget> read_ptx_target(std::string_view ptx, std::string_view name) {
  const auto target = ptx_directive(ptx, ".target ");
  if (!target.starts_with("sm_")) {
    return fail("failed to read PTX {}: no `.target sm_XY` directive", name);
  }
  return with_context(parse_gpu_target("compute_" + std::string(target.substr(3))),
                      fmt::format("failed to read PTX {}", name));
}

Result<std::vector<GpuTarget>> list_device_targets(std::span<const std::byte> elf, std::string_view name) {
  HWIMG_TRY_ASSIGN(const auto entries, read_fatbin_entries(elf, name));
  std::vector<GpuTarget> targets;
  for (const auto& entry : entries) {
    if (entry.kind != FatbinEntryKind::lto_ir && !entry.link_stub) {
      targets.push_back(entry.target());
    }
  }
  std::ranges::sort(targets);
  const auto [first, last] = std::ranges::unique(targets);
  targets.erase(first, last);
  return targets;
}

Result<std::vector<std::string>> list_device_code(std::span<const std::byte> elf, std::string_view name) {
  HWIMG_TRY_ASSIGN(const auto targets, list_device_targets(elf, name));
  std::vector<std::string> names;
  for (const auto& target : targets) {
    names.push_back(target.name());
  }
  return names;
}

}  // namespace hwimg::hw
