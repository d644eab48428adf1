#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "hwimg/hw/elf.hpp"
#include "hwimg/hw/fatbin.hpp"
#include "hwimg/hw/fatbin_check.hpp"
#include "hwimg/util/files.hpp"

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
  std::uint64_t flags;  // 0x8000: zstd-compressed, so the cubin itself is not inspected
  std::uint32_t header_size;
  Bytes payload;
  std::optional<std::uint32_t> compressed_size;
};

EntrySpec spec(std::uint16_t kind, std::uint32_t arch, std::uint64_t flags = 0x8011, std::uint32_t header_size = 64,
               Bytes payload = Bytes(16, std::byte{0xaa}), std::optional<std::uint32_t> compressed_size = {}) {
  return {kind, arch, flags, header_size, std::move(payload), compressed_size};
}

Bytes entry(const EntrySpec& spec) {
  Bytes bytes(spec.header_size);
  put<std::uint16_t>(bytes, 0, spec.kind);
  put<std::uint16_t>(bytes, 2, 0x0101);
  put<std::uint32_t>(bytes, 4, spec.header_size);
  put<std::uint64_t>(bytes, 8, spec.payload.size());
  put<std::uint32_t>(bytes, 16,
                     spec.compressed_size.value_or((spec.flags & 0xa000) ? static_cast<std::uint32_t>(spec.payload.size())
                                                                          : 0));
  put<std::uint32_t>(bytes, 28, spec.arch);
  put<std::uint64_t>(bytes, 40, spec.flags);
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

// A minimal ELF64 file: sections null, .shstrtab and `section` holding `contents` at offset 128.
Bytes elf_with(const Bytes& contents, std::string_view section = ".nv_fatbin", std::uint16_t machine = 62,
               std::uint32_t flags = 0) {
  const std::string names = std::string("\0.shstrtab\0", 11) + std::string(section) + '\0';
  Bytes bytes(64);
  std::memcpy(bytes.data(), "\x7f" "ELF\x02\x01\x01", 7);
  put<std::uint8_t>(bytes, 8, 8);
  put<std::uint16_t>(bytes, 16, 2);
  put<std::uint16_t>(bytes, 18, machine);
  put<std::uint32_t>(bytes, 48, flags);
  const std::size_t names_at = 64;
  for (const char c : names) {
    bytes.push_back(static_cast<std::byte>(c));
  }
  bytes.resize(128);
  const std::size_t contents_at = 128;
  bytes.insert(bytes.end(), contents.begin(), contents.end());
  bytes.resize((bytes.size() + 7) / 8 * 8);
  const auto table = bytes.size();
  bytes.resize(table + 3 * 64);
  put<std::uint64_t>(bytes, 40, table);
  put<std::uint16_t>(bytes, 58, 64);
  put<std::uint16_t>(bytes, 60, 3);
  put<std::uint16_t>(bytes, 62, 1);
  put<std::uint32_t>(bytes, table + 64, 1);
  put<std::uint32_t>(bytes, table + 64 + 4, 3);
  put<std::uint64_t>(bytes, table + 64 + 24, names_at);
  put<std::uint64_t>(bytes, table + 64 + 32, names.size());
  put<std::uint32_t>(bytes, table + 128, 11);
  put<std::uint32_t>(bytes, table + 128 + 4, 1);
  put<std::uint64_t>(bytes, table + 128 + 24, contents_at);
  put<std::uint64_t>(bytes, table + 128 + 32, contents.size());
  return bytes;
}

std::vector<std::string> listed(const Bytes& bytes) { return list_device_code(bytes, "test.bin").value(); }
std::string list_error(const Bytes& bytes) { return list_device_code(bytes, "test.bin").error().message; }

Bytes real_object() {
  const auto text = hwimg::util::read_file(HWIMG_TEST_DATA_DIR "/fatbin/sm75-compute80-sm90a-sm100f.o").value();
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
      entry(spec(2, 90, 0x108011)),
      entry(spec(1, 100, 0x208011)),
      entry(spec(2, 120, 0x1008011)),
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

TEST_CASE("an uncompressed cubin must agree with its entry; device-link stubs are not listed") {
  auto cubin = elf_with({}, ".text", elf_machine_cuda, 0x06005a04);
  CHECK(listed(elf_with(container({entry(spec(2, 90, 0x11, 64, cubin))}))).empty());
  CHECK(list_error(elf_with(container({entry(spec(2, 80, 0x11, 64, cubin))}))) ==
        "failed to read fatbin in test.bin: the entry at offset 144 says sm_80 but its cubin is for sm_90");
  auto host = elf_with({}, ".text", 62, 0);
  CHECK(list_error(elf_with(container({entry(spec(2, 80, 0x11, 64, host))}))) ==
        "failed to read fatbin in test.bin: the cubin at offset 208 has ELF machine 62, not EM_CUDA (190)");
}

TEST_CASE("malformed fatbins are refused with the file and offset") {
  auto truncated = container({entry(spec(2, 80))});
  put<std::uint64_t>(truncated, 8, 4096);
  CHECK(list_error(elf_with(truncated)) ==
        "failed to read fatbin in test.bin: container at offset 128 claims 4096 bytes, beyond the end of the section");
  auto bad_magic = container({entry(spec(2, 80))});
  put<std::uint32_t>(bad_magic, 0, 0x12345678);
  CHECK(list_error(elf_with(bad_magic)) ==
        "failed to read fatbin in test.bin: no fatbin magic at offset 128 (found 0x12345678)");
  auto bad_version = container({entry(spec(2, 80))});
  put<std::uint16_t>(bad_version, 4, 2);
  CHECK(list_error(elf_with(bad_version)) ==
        "failed to read fatbin in test.bin: container at offset 128 has version 2 and header size 16, not 1 and 16");
  CHECK(list_error(elf_with(container({entry(spec(2, 80, 0x8011, 32))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 has a 32-byte header, less than 64");
  auto long_payload = entry(spec(2, 80));
  put<std::uint64_t>(long_payload, 8, 17);
  CHECK(list_error(elf_with(container({long_payload}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 (header 64 bytes, payload 17 bytes) runs beyond its "
        "container");
  CHECK(list_error(elf_with(container({entry(spec(2, 80)), Bytes(20)}))) ==
        "failed to read fatbin in test.bin: entry header at offset 224 runs beyond its container");
  CHECK(list_error(elf_with(container({entry(spec(2, 80, 0x8011, 64, Bytes(16, std::byte{0xaa}), 17))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 claims 17 compressed bytes in a 16-byte payload");
  CHECK(list_error(elf_with(container({entry(spec(4, 80))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 has unknown kind 4");
  CHECK(list_error(elf_with(container({entry(spec(2, 100, 0x308011))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 is both arch-specific and family (flags 0x308011)");
  CHECK(list_error(elf_with(container({entry(spec(2, 80, 0xa011))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 claims two compressions (flags 0xa011)");
  CHECK(list_error(elf_with(container({entry(spec(2, 0))}))) ==
        "failed to read fatbin in test.bin: entry at offset 144 has invalid architecture 0");
  CHECK(list_error(elf_with(Bytes{std::byte{1}, std::byte{2}})) ==
        "failed to read fatbin in test.bin: container header at offset 128 runs beyond the section");
}

TEST_CASE("malformed ELF files are refused with the offset") {
  CHECK(list_error(Bytes{std::byte{1}}) == "failed to read ELF file test.bin: no ELF magic at offset 0");
  auto bytes = elf_with(container({entry(spec(2, 80))}));
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

TEST_CASE("the check refuses a variant whose files lack a declared target, showing both lists") {
  const auto found = list_device_targets(real_object(), "k.o").value();
  CHECK(check_device_code("v", targets({"sm_75", "compute_80", "sm_90a", "sm_100f"}), found));
  CHECK(check_device_code("cuda13.0-sm90a-x86-64-v3", targets({"sm_75", "compute_80", "sm_90a", "sm_100f", "sm_120"}),
                          found)
            .error()
            .message == "failed to check the device code of variant cuda13.0-sm90a-x86-64-v3: its files embed sm_75, "
                        "compute_80, sm_90a, sm_100f but it declares sm_75, compute_80, sm_90a, sm_100f, sm_120 "
                        "(missing sm_120)");
  CHECK(check_device_code("v", targets({"sm_75", "sm_90a", "sm_100f"}), found).error().message ==
        "failed to check the device code of variant v: its files embed sm_75, compute_80, sm_90a, sm_100f but it "
        "declares sm_75, sm_90a, sm_100f (not declared compute_80)");
  CHECK(check_device_code("v", targets({"sm_80"}), {}).error().message ==
        "failed to check the device code of variant v: its files embed no device code but it declares sm_80 "
        "(missing sm_80)");
}

TEST_CASE("scanning a directory collects device code from its ELF files only") {
  auto dir = hwimg::util::TempDir::create(std::filesystem::temp_directory_path(), "hwimg-fatbin").value();
  const auto object = real_object();
  const auto other = elf_with(container({entry(spec(1, 120))}));
  REQUIRE(hwimg::util::make_directories(dir.path() / "bin"));
  REQUIRE(hwimg::util::make_directories(dir.path() / "lib"));
  REQUIRE(hwimg::util::write_file_atomic(dir.path() / "bin" / "app",
                                         std::string_view(reinterpret_cast<const char*>(object.data()), object.size())));
  REQUIRE(hwimg::util::write_file_atomic(dir.path() / "lib" / "libk.so",
                                         std::string_view(reinterpret_cast<const char*>(other.data()), other.size())));
  REQUIRE(hwimg::util::write_file_atomic(dir.path() / "README", "not an ELF file"));
  const auto scan = scan_device_code(dir.path()).value();
  CHECK(join_target_names(scan.targets) == "sm_75,compute_80,sm_90a,sm_100f,compute_120");
  CHECK(scan.files.size() == 2);
  CHECK(scan_device_code(dir.path() / "missing").error().message.starts_with("failed to scan"));
}
