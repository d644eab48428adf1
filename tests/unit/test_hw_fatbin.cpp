#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "hwimg/hw/device_code.hpp"
#include "hwimg/hw/elf.hpp"
#include "hwimg/hw/fatbin.hpp"
#include "hwimg/hw/fatbin_check.hpp"
#include "hwimg/hw/fatbin_payload.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

#include <zstd.h>

using namespace hwimg::hw;

namespace {

using Bytes = std::vector<std::byte>;

template <typename T>
void put(Bytes& bytes, std::size_t at, T value) {
  if (bytes.size() < at + sizeof(T)) {
    bytes.resize(at + sizeof(T));
  }
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    bytes[at + i] = static_cast<std::byte>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
  }
}

struct EntrySpec {
  std::uint16_t kind;
  std::uint32_t arch;
  std::uint64_t flags;
  std::uint32_t header_size;
  Bytes payload;
  std::optional<std::uint32_t> compressed_size;
  std::uint64_t uncompressed_size;
};

Bytes cubin(std::uint32_t arch, bool with_function = true);
Bytes ptx(std::string_view target);

// An entry whose payload, unless given, is what it claims: a cubin with a function, or PTX text.
EntrySpec spec(std::uint16_t kind, std::uint32_t arch, std::uint64_t flags = 0x11, std::uint32_t header_size = 64,
               Bytes payload = {}, std::optional<std::uint32_t> compressed_size = {}) {
  if (payload.empty()) {
    const std::string suffix = (flags & 0x100000) ? "a" : (flags & 0x200000) ? "f" : "";
    payload = kind == 2 ? cubin(arch) : kind == 1 ? ptx(fmt::format("sm_{}{}", arch, suffix)) : Bytes(16, std::byte{0xaa});
  }
  return {kind, arch, flags, header_size, std::move(payload), compressed_size, 0};
}

// The payload compressed with zstd, as nvcc -Xfatbin -compress-all writes it.
EntrySpec zstd(EntrySpec spec) {
  Bytes compressed(ZSTD_compressBound(spec.payload.size()));
  const auto size = ZSTD_compress(compressed.data(), compressed.size(), spec.payload.data(), spec.payload.size(), 3);
  REQUIRE_FALSE(ZSTD_isError(size));
  compressed.resize(size);
  spec.uncompressed_size = spec.payload.size();
  spec.compressed_size = static_cast<std::uint32_t>(size);
  compressed.resize((size + 7) / 8 * 8);
  spec.payload = std::move(compressed);
  spec.flags |= 0x8000;
  return spec;
}

Bytes entry(const EntrySpec& spec) {
  Bytes bytes(spec.header_size);
  put<std::uint16_t>(bytes, 0, spec.kind);
  put<std::uint16_t>(bytes, 2, 0x0101);
  put<std::uint32_t>(bytes, 4, spec.header_size);
  put<std::uint64_t>(bytes, 8, spec.payload.size());
  put<std::uint32_t>(bytes, 16, spec.compressed_size.value_or(0));
  put<std::uint32_t>(bytes, 28, spec.arch);
  put<std::uint64_t>(bytes, 40, spec.flags);
  put<std::uint64_t>(bytes, 56, spec.uncompressed_size);
  bytes.resize(std::max<std::size_t>(bytes.size(), spec.header_size));
  bytes.insert(bytes.end(), spec.payload.begin(), spec.payload.end());
  return bytes;
}

Bytes container(const std::vector<Bytes>& entries) {
  Bytes bytes(16);
  put<std::uint32_t>(bytes, 0, 0xBA55ED50);
  put<std::uint16_t>(bytes, 4, 1);
  put<std::uint16_t>(bytes, 6, 16);
  std::uint64_t size = 0;
  for (const auto& e : entries) {
    bytes.insert(bytes.end(), e.begin(), e.end());
    size += e.size();
  }
  put<std::uint64_t>(bytes, 8, size);
  return bytes;
}

// A minimal ELF64 file: a null section, .shstrtab at offset 64, then each named section's contents
// from offset 128 on, 8-byte aligned, then the section header table.
struct Section {
  std::string name;
  Bytes contents;
  std::uint32_t type = 1;  // SHT_PROGBITS
};

Bytes elf_sections(const std::vector<Section>& sections, std::uint16_t machine = 62, std::uint32_t flags = 0) {
  std::string names("\0.shstrtab\0", 11);
  std::vector<std::size_t> name_offsets;
  for (const auto& section : sections) {
    name_offsets.push_back(names.size());
    names += section.name + '\0';
  }
  Bytes bytes(64);
  std::memcpy(bytes.data(), "\x7f" "ELF\x02\x01\x01", 7);
  put<std::uint8_t>(bytes, 8, 8);
  put<std::uint16_t>(bytes, 16, 2);
  put<std::uint16_t>(bytes, 18, machine);
  put<std::uint32_t>(bytes, 48, flags);
  for (const char c : names) {
    bytes.push_back(static_cast<std::byte>(c));
  }
  bytes.resize(128);
  std::vector<std::size_t> offsets;
  for (const auto& section : sections) {
    offsets.push_back(bytes.size());
    bytes.insert(bytes.end(), section.contents.begin(), section.contents.end());
    bytes.resize((bytes.size() + 7) / 8 * 8);
  }
  const auto table = bytes.size();
  const auto count = sections.size() + 2;
  bytes.resize(table + count * 64);
  put<std::uint64_t>(bytes, 40, table);
  put<std::uint16_t>(bytes, 58, 64);
  put<std::uint16_t>(bytes, 60, static_cast<std::uint16_t>(count));
  put<std::uint16_t>(bytes, 62, 1);
  put<std::uint32_t>(bytes, table + 64, 1);
  put<std::uint32_t>(bytes, table + 64 + 4, 3);
  put<std::uint64_t>(bytes, table + 64 + 24, 64);
  put<std::uint64_t>(bytes, table + 64 + 32, names.size());
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const auto at = table + (i + 2) * 64;
    put<std::uint32_t>(bytes, at, static_cast<std::uint32_t>(name_offsets[i]));
    put<std::uint32_t>(bytes, at + 4, sections[i].type);
    put<std::uint64_t>(bytes, at + 24, offsets[i]);
    put<std::uint64_t>(bytes, at + 32, sections[i].contents.size());
  }
  return bytes;
}

Bytes elf_with(const Bytes& contents, const std::string& section = ".nv_fatbin", std::uint16_t machine = 62,
               std::uint32_t flags = 0) {
  return elf_sections({{section, contents}}, machine, flags);
}

// A cubin as nvcc 13 writes it: EM_CUDA, ABI version 8 with the SM in bits 8-15, and a symbol
// table holding one function (none for a device-link stub).
Bytes cubin(std::uint32_t arch, bool with_function) {
  Bytes symbols(48);
  put<std::uint8_t>(symbols, 24 + 4, with_function ? 0x12 : 0x11);  // GLOBAL FUNC, or GLOBAL OBJECT
  return elf_sections({{".symtab", symbols, 2}}, elf_machine_cuda, 0x06000002 | (arch << 8));
}

Bytes ptx(std::string_view target) {
  const auto text = fmt::format("\n.version 9.0\n.target {}\n.address_size 64\n", target);
  Bytes bytes;
  for (const char c : text) {
    bytes.push_back(static_cast<std::byte>(c));
  }
  bytes.resize((bytes.size() + 8) / 8 * 8);
  return bytes;
}

std::vector<std::string> listed(const Bytes& bytes) { return list_device_code(bytes, "test.bin").value(); }
std::string list_error(const Bytes& bytes) { return list_device_code(bytes, "test.bin").error().message; }

Bytes real_object(const std::string& name = "sm75-compute80-sm90a-sm100f.o") {
  const auto text = hwimg::util::read_file(std::string(HWIMG_TEST_DATA_DIR "/fatbin/") + name).value();
  const auto* data = reinterpret_cast<const std::byte*>(text.data());
  return {data, data + text.size()};
}

std::vector<GpuTarget> targets(std::initializer_list<std::string_view> names) {
  std::vector<GpuTarget> result;
  for (const auto name : names) {
    result.push_back(parse_gpu_target(name).value());
  }
  return result;
}

}  // namespace

TEST_CASE("an object nvcc 13.0 built lists exactly the targets it was given") {
  CHECK(listed(real_object()) == std::vector<std::string>{"sm_75", "compute_80", "sm_90a", "sm_100f"});
}

TEST_CASE("entries name SASS, PTX, a and f targets; LTO IR is not listed") {
  const auto bytes = elf_with(container({
      entry(spec(2, 90, 0x100011)),
      entry(zstd(spec(1, 100, 0x200011))),
      entry(spec(2, 120, 0x1000011)),
      entry(spec(8, 90, 0x18011)),
  }));
  CHECK(listed(bytes) == std::vector<std::string>{"sm_90a", "compute_100f", "sm_120"});
  const auto entries = read_fatbin_entries(bytes, "test.bin").value();
  REQUIRE(entries.size() == 4);
  CHECK(entries[0].offset == 128 + 16);
  CHECK(entries[3].kind == FatbinEntryKind::lto_ir);
}

TEST_CASE("several containers with zero padding between them, and __nv_relfatbin") {
  auto first = container({entry(spec(2, 80))});
  first.resize(first.size() + 8);
  const auto second = container({entry(spec(1, 90))});
  first.insert(first.end(), second.begin(), second.end());
  CHECK(listed(elf_with(first)) == std::vector<std::string>{"sm_80", "compute_90"});
  CHECK(listed(elf_with(second, "__nv_relfatbin")) == std::vector<std::string>{"compute_90"});
  CHECK(listed(elf_with(second, ".data")).empty());
}

TEST_CASE("__nv_relfatbin counts only in files without .nv_fatbin") {
  // An -rdc executable: the linked SASS in .nv_fatbin, the relocatable objects and PTX beside it.
  const auto executable = elf_sections({{".nv_fatbin", container({entry(spec(2, 120))})},
                                        {"__nv_relfatbin", container({entry(spec(1, 120)), entry(spec(2, 120))})}});
  const auto relocatable = elf_with(container({entry(spec(1, 120))}), "__nv_relfatbin");
  CHECK(listed(executable) == std::vector<std::string>{"sm_120"});
  CHECK(listed(relocatable) == std::vector<std::string>{"compute_120"});
}

TEST_CASE("cubins and PTX must agree with their entries; device-link stubs are not listed") {
  CHECK(list_error(elf_with(container({entry(spec(2, 80, 0x11, 64, cubin(90)))}))) ==
        "failed to read fatbin in test.bin: the entry at offset 144 says sm_80 but its cubin is for sm_90");
  const auto host = elf_with({}, ".text", 62, 0);
  CHECK(list_error(elf_with(container({entry(spec(2, 80, 0x11, 64, host))}))) ==
        "failed to read fatbin in test.bin: the cubin at offset 208 has ELF machine 62, not EM_CUDA (190)");
  CHECK(list_error(elf_with(container({entry(spec(1, 90, 0x100011, 64, ptx("sm_90")))}))) ==
        "failed to read fatbin in test.bin: the PTX of the entry at offset 144 targets 'sm_90' but the entry says "
        "compute_90a");
  CHECK(listed(elf_with(container({entry(spec(2, 90, 0x11, 64, cubin(90, false))), entry(spec(2, 80))}))) ==
        std::vector<std::string>{"sm_80"});
  CHECK(listed(elf_with(container({entry(zstd(spec(2, 90, 0x11, 64, cubin(90, false))))}))).empty());
  const auto entries = read_fatbin_entries(elf_with(container({entry(spec(1, 80))})), "test.bin").value();
  CHECK(entries.at(0).ptx_isa == "9.0");
}

TEST_CASE("compressed payloads are checked after decompression") {
  CHECK(listed(elf_with(container({entry(zstd(spec(2, 100, 0x1200011))), entry(zstd(spec(1, 120)))}))) ==
        std::vector<std::string>{"sm_100f", "compute_120"});
  auto wrong = zstd(spec(2, 80, 0x11, 64, cubin(86)));
  CHECK(list_error(elf_with(container({entry(wrong)}))) ==
        "failed to read fatbin in test.bin: the entry at offset 144 says sm_80 but its cubin is for sm_86");
  auto corrupt = zstd(spec(2, 80));
  corrupt.payload[4] = std::byte{0xff};
  CHECK(list_error(elf_with(container({entry(corrupt)}))).starts_with(
      "failed to read fatbin in test.bin: the zstd payload of the entry at offset 144 does not decompress to"));
  auto no_size = zstd(spec(2, 80));
  no_size.uncompressed_size = 0;
  CHECK(list_error(elf_with(container({entry(no_size)}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 claims 0 uncompressed bytes");
  // A raw LZ4 block: 3 literals "abc", then a 9-byte match at distance 3, then the end.
  const Bytes lz4{std::byte{0x35}, std::byte{'a'}, std::byte{'b'}, std::byte{'c'}, std::byte{3}, std::byte{0},
                  std::byte{0x00}};
  const auto decoded = hwimg::hw::decompress_payload(lz4, PayloadCompression::lz4, 12, "t", 0).value();
  CHECK(std::string(reinterpret_cast<const char*>(decoded.data()), decoded.size()) == "abcabcabcabc");
  CHECK(hwimg::hw::decompress_payload(lz4, PayloadCompression::lz4, 13, "t", 0).error().message ==
        "failed to read fatbin in t: the LZ4 payload of the entry at offset 0 does not decompress to 13 bytes");
  const Bytes far{std::byte{0x10}, std::byte{'a'}, std::byte{9}, std::byte{0}};
  CHECK_FALSE(hwimg::hw::decompress_payload(far, PayloadCompression::lz4, 8, "t", 0));
}

TEST_CASE("real zstd and LZ4 objects from nvcc 13.0") {
  CHECK(listed(real_object("zstd-sm80-compute90a.o")) == std::vector<std::string>{"sm_80", "compute_90a"});
  CHECK(listed(real_object("lz4-sm100f-compute80.o")) == std::vector<std::string>{"compute_80", "sm_100f"});
}

TEST_CASE("malformed fatbins are refused with the file and offset") {
  auto truncated = container({entry(spec(8, 80))});
  put<std::uint64_t>(truncated, 8, 4096);
  CHECK(list_error(elf_with(truncated)) ==
        "failed to read fatbin in test.bin: container at offset 128 claims 4096 bytes, beyond the end of the section");
  auto bad_magic = container({entry(spec(8, 80))});
  put<std::uint32_t>(bad_magic, 0, 0x12345678);
  CHECK(list_error(elf_with(bad_magic)) ==
        "failed to read fatbin in test.bin: no fatbin magic at offset 128 (found 0x12345678)");
  auto bad_version = container({entry(spec(8, 80))});
  put<std::uint16_t>(bad_version, 4, 2);
  CHECK(list_error(elf_with(bad_version)) ==
        "failed to read fatbin in test.bin: container at offset 128 has version 2 and header size 16, not 1 and 16");
  CHECK(list_error(elf_with(container({entry(spec(8, 80, 0x11, 32))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 has a 32-byte header, less than 64");
  auto long_payload = entry(spec(8, 80));
  put<std::uint64_t>(long_payload, 8, 17);
  CHECK(list_error(elf_with(container({long_payload}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 (header 64 bytes, payload 17 bytes) runs beyond its "
        "container");
  CHECK(list_error(elf_with(container({entry(spec(8, 80)), Bytes(20)}))) ==
        "failed to read fatbin in test.bin: entry header at offset 224 runs beyond its container");
  CHECK(list_error(elf_with(container({entry(spec(2, 80, 0x8011, 64, Bytes(16, std::byte{0xaa}), 17))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 claims 17 compressed bytes in a 16-byte payload");
  CHECK(list_error(elf_with(container({entry(spec(4, 80))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 has unknown kind 4");
  CHECK(list_error(elf_with(container({entry(spec(8, 100, 0x308011))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 is both arch-specific and family (flags 0x308011)");
  CHECK(list_error(elf_with(container({entry(spec(8, 80, 0xa011))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 claims two compressions (flags 0xa011)");
  CHECK(list_error(elf_with(container({entry(spec(8, 0))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 has invalid architecture 0");
  CHECK(list_error(elf_with(Bytes{std::byte{1}, std::byte{2}})) ==
        "failed to read fatbin in test.bin: container header at offset 128 runs beyond the section");
}

TEST_CASE("malformed ELF files are refused with the offset") {
  CHECK(list_error(Bytes{std::byte{1}}) == "failed to read ELF file test.bin: no ELF magic at offset 0");
  auto bytes = elf_with(container({entry(spec(8, 80))}));
  CHECK(list_error(Bytes(bytes.begin(), bytes.begin() + 40)) ==
        "failed to read ELF file test.bin: the header ends beyond the end of the file (40 bytes)");
  auto elf32 = bytes;
  elf32[4] = std::byte{1};
  CHECK(list_error(elf32) ==
        "failed to read ELF file test.bin: only 64-bit little-endian ELF is supported (class 1, data 1 at offset 4)");
  auto cut = Bytes(bytes.begin(), bytes.end() - 64);
  CHECK(list_error(cut) == fmt::format("failed to read ELF file test.bin: 3 section headers at offset {} run beyond "
                                       "the end of the file ({} bytes)",
                                       bytes.size() - 192, cut.size()));
  auto far = bytes;
  put<std::uint64_t>(far, bytes.size() - 64 + 24, 1u << 20);
  CHECK(list_error(far) == fmt::format("failed to read ELF file test.bin: section 2 (offset 1048576, 96 bytes) runs "
                                       "beyond the end of the file ({} bytes)",
                                       bytes.size()));
  auto names = bytes;
  put<std::uint16_t>(names, 62, 9);
  CHECK(list_error(names) ==
        "failed to read ELF file test.bin: section name table index 9 at offset 62 is out of range (3 sections)");
}

TEST_CASE("every truncation of a real object fails cleanly or lists a subset") {
  const auto bytes = real_object();
  for (std::size_t size = 0; size < bytes.size(); size += 97) {
    const auto result = list_device_code(std::span(bytes).first(size), "cut.o");
    CHECK((!result || result->size() <= 4));
  }
}

TEST_CASE("corrupting any byte of real objects gives an answer or an error, never a crash") {
  for (const auto* name : {"sm75-compute80-sm90a-sm100f.o", "zstd-sm80-compute90a.o", "lz4-sm100f-compute80.o"}) {
    const auto original = real_object(name);
    std::size_t failures = 0;
    for (std::size_t at = 0; at < original.size(); at += 3) {
      auto bytes = original;
      bytes[at] ^= std::byte{0x5a};
      failures += list_device_code(bytes, name).has_value() ? 0U : 1U;
    }
    CHECK(failures > 0);
  }
}

namespace {

// A scan of one file holding `bytes`, as the builder makes it.
DeviceCodeScan scan_of(const Bytes& bytes, const std::string& name) {
  DeviceCodeScan scan;
  auto code = read_device_code(bytes, DeviceFileKind::host_elf, name).value();
  for (auto& module : code.modules) {
    scan.modules.push_back({name, std::move(module)});
  }
  return scan;
}

}  // namespace

TEST_CASE("the check refuses a variant whose files lack a declared target, showing both lists") {
  const auto found = scan_of(real_object(), "k.o");
  CHECK(check_device_code("v", targets({"sm_75", "compute_80", "sm_90a", "sm_100f"}), found));
  CHECK(check_device_code("cuda13.0-sm90a-x86-64-v3", targets({"sm_75", "compute_80", "sm_90a", "sm_100f", "sm_120"}),
                          found)
            .error()
            .message == "failed to check the device code of variant cuda13.0-sm90a-x86-64-v3: its files embed sm_75, "
                        "compute_80, sm_90a, sm_100f but it declares sm_75, compute_80, sm_90a, sm_100f, sm_120 "
                        "(missing sm_120); the code: k.o (fatbin container at offset 960)");
  CHECK(check_device_code("v", targets({"sm_75", "sm_90a", "sm_100f"}), found).error().message ==
        "failed to check the device code of variant v: its files embed sm_75, compute_80, sm_90a, sm_100f but it "
        "declares sm_75, sm_90a, sm_100f (not declared compute_80); the code: k.o (fatbin container at offset 960)");
  CHECK(check_device_code("v", targets({"sm_80"}), {}).error().message ==
        "failed to check the device code of variant v: its files embed no device code but it declares sm_80 "
        "(missing sm_80)");
}

TEST_CASE("scanning a directory collects the modules of its device-code files only") {
  const auto dir = hwimg::test::scratch_directory("hwimg-fatbin");
  const auto object = real_object();
  const auto other = elf_with(container({entry(spec(1, 120))}));
  hwimg::test::write_file(dir.path() / "bin" / "app",
                          std::string_view(reinterpret_cast<const char*>(object.data()), object.size()));
  hwimg::test::write_file(dir.path() / "lib" / "libk.so",
                          std::string_view(reinterpret_cast<const char*>(other.data()), other.size()));
  hwimg::test::write_file(dir.path() / "README", "not an ELF file");
  const auto scan = scan_device_code(dir.path()).value();
  REQUIRE(scan.modules.size() == 2);
  CHECK(join_target_names(scan.modules[0].module.targets) == "sm_75,compute_80,sm_90a,sm_100f");
  CHECK(join_target_names(scan.modules[1].module.targets) == "compute_120");
  CHECK(scan.common_targets().empty());
  CHECK(scan.files.size() == 2);
  CHECK(scan_device_code(dir.path() / "missing").error().message.starts_with("failed to scan"));
}
