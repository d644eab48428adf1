#include "hwimg/hw/device_code.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "hwimg/hw/ar_archive.hpp"
#include "hwimg/hw/elf.hpp"
#include "hwimg/hw/fatbin.hpp"

namespace hwimg::hw {

namespace {

constexpr std::uint32_t fatbin_magic = 0xBA55ED50;

void sort_unique_targets(std::vector<GpuTarget>& targets) {
  std::ranges::sort(targets);
  const auto [first, last] = std::ranges::unique(targets);
  targets.erase(first, last);
}

// One module per container, in file order; a container without kernels (only device-link stubs or
// LTO IR) launches nothing and so constrains nothing.
std::vector<DeviceModule> modules_of(const std::vector<FatbinEntry>& entries, std::string_view prefix) {
  std::map<std::uint64_t, std::vector<GpuTarget>> by_container;
  for (const auto& entry : entries) {
    auto& targets = by_container[entry.container];
    if (entry.kind != FatbinEntryKind::lto_ir && !entry.link_stub) {
      targets.push_back(entry.target());
    }
  }
  std::vector<DeviceModule> modules;
  for (auto& [offset, targets] : by_container) {
    if (!targets.empty()) {
      sort_unique_targets(targets);
      modules.push_back({fmt::format("{}fatbin container at offset {}", prefix, offset), std::move(targets)});
    }
  }
  return modules;
}

Result<FileDeviceCode> read_host_elf(std::span<const std::byte> bytes, std::string_view name,
                                     std::string_view prefix) {
  FileDeviceCode code;
  HWIMG_TRY_ASSIGN(const auto entries, read_fatbin_entries(bytes, name));
  code.modules = modules_of(entries, prefix);
  HWIMG_TRY_ASSIGN(const auto kept, read_fatbin_entries(bytes, name, FatbinSections::relocatable));
  std::vector<GpuTarget> loaded;
  for (const auto& module : code.modules) {
    std::ranges::copy(module.targets, std::back_inserter(loaded));
  }
  for (const auto& entry : kept) {
    if (entry.kind != FatbinEntryKind::lto_ir && !entry.link_stub &&
        std::ranges::find(loaded, entry.target()) == loaded.end()) {
      code.relocatable_only.push_back(entry.target());
    }
  }
  sort_unique_targets(code.relocatable_only);
  return code;
}

Result<FileDeviceCode> read_archive(std::span<const std::byte> bytes, std::string_view name) {
  HWIMG_TRY_ASSIGN(const auto members, read_ar_members(bytes, name));
  FileDeviceCode code;
  for (const auto& member : members) {
    if (!is_elf(member.data)) {
      continue;
    }
    HWIMG_TRY_ASSIGN(auto found, read_host_elf(member.data, fmt::format("{}({})", name, member.name),
                                               fmt::format("member {}, ", member.name)));
    std::ranges::move(found.modules, std::back_inserter(code.modules));
    std::ranges::copy(found.relocatable_only, std::back_inserter(code.relocatable_only));
  }
  sort_unique_targets(code.relocatable_only);
  return code;
}

}  // namespace

DeviceFileKind device_file_kind(std::span<const std::byte> head, std::string_view file_name) {
  if (is_ar_archive(head)) {
    return DeviceFileKind::archive;
  }
  if (head.size() >= 4 && read_le<std::uint32_t>(head, 0) == fatbin_magic) {
    return DeviceFileKind::fatbin;
  }
  if (is_elf(head)) {
    // e_machine is at offset 18 of every ELF header.
    return head.size() >= 20 && read_le<std::uint16_t>(head, 18) == elf_machine_cuda ? DeviceFileKind::cubin
                                                                                     : DeviceFileKind::host_elf;
  }
  return file_name.ends_with(".ptx") ? DeviceFileKind::ptx : DeviceFileKind::none;
}

Result<FileDeviceCode> read_device_code(std::span<const std::byte> bytes, DeviceFileKind kind,
                                        std::string_view name) {
  FileDeviceCode code;
  switch (kind) {
    case DeviceFileKind::none: break;
    case DeviceFileKind::host_elf: return read_host_elf(bytes, name, "");
    case DeviceFileKind::archive: return read_archive(bytes, name);
    case DeviceFileKind::fatbin: {
      HWIMG_TRY_ASSIGN(const auto entries, parse_fatbin(bytes, 0, name));
      code.modules = modules_of(entries, "");
      break;
    }
    case DeviceFileKind::cubin: {
      HWIMG_TRY_ASSIGN(const auto target, read_cubin_target(bytes, name));
      if (target) {
        code.modules.push_back({"cubin", {*target}});
      }
      break;
    }
    case DeviceFileKind::ptx: {
      const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      HWIMG_TRY_ASSIGN(const auto target, read_ptx_target(text, name));
      code.modules.push_back({"PTX", {target}});
      break;
    }
  }
  return code;
}

std::vector<GpuTarget> common_targets(std::span<const DeviceModule> modules) {
  if (modules.empty()) {
    return {};
  }
  std::vector<GpuTarget> common = modules.front().targets;
  for (const auto& module : modules.subspan(1)) {
    std::vector<GpuTarget> both;
    std::ranges::set_intersection(common, module.targets, std::back_inserter(both));
    common = std::move(both);
  }
  return common;
}

}  // namespace hwimg::hw
