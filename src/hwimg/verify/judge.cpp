#include "hwimg/verify/judge.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "hwimg/util/strings.hpp"

namespace hwimg::verify {
namespace {

// Runtime libraries that choose their code by CPUID when they start (glibc's dynamic loader and its
// cpu_features, libc's and libm's IFUNCs, libstdc++'s random_device, libgcc's unwinder, OpenSSL's
// OPENSSL_ia32cap; docs/compatibility.md#instruction-sets). Build steps copy them into images (the
// CUDA example bundles the host's), stripped, so their dispatch is not visible in symbols.
bool selects_code_at_run_time(std::string_view path) {
  static constexpr std::array<std::string_view, 11> prefixes{
      "ld-linux-x86-64.so.", "libc.so.", "libm.so.", "libmvec.so.", "libpthread.so.", "libdl.so.",
      "librt.so.", "libstdc++.so.", "libgcc_s.so.", "libcrypto.so.", "libssl.so."};
  const auto name = path.substr(path.rfind('/') + 1);
  return std::ranges::any_of(prefixes, [&](std::string_view prefix) { return name.starts_with(prefix); });
}

}  // namespace

CpuLabel label_for(const hw::CpuTarget& target, std::string architecture) {
  CpuLabel label{std::move(architecture), std::string(target.name), {}, target.level};
  // The level rows list only what they add over the baseline; the baseline is every amd64 CPU's.
  if (label.architecture == "amd64") label.allowed = hw::x86_level_features(target.level);
  label.allowed.insert(target.features.begin(), target.features.end());
  return label;
}

std::optional<std::string> overlay_xattr_line(const LayerNeeds& needs, std::string_view where) {
  if (needs.overlay_xattr_entries == 0) return std::nullopt;
  const auto more = needs.overlay_xattr_entries > needs.overlay_xattrs.size()
                        ? fmt::format(", and more ({} entries in all)", needs.overlay_xattr_entries)
                        : std::string();
  return fmt::format("{}: {} carr{} overlayfs's own xattrs, which rootless Docker 25 and later cannot set and so "
                     "refuses to unpack (docs/recipe.md#overlayfs-xattrs): {}{}",
                     where, needs.overlay_xattr_entries == 1 ? "1 entry" : fmt::format("{} entries", needs.overlay_xattr_entries),
                     needs.overlay_xattr_entries == 1 ? "ies" : "y", fmt::join(needs.overlay_xattrs, ", "), more);
}

void judge_layer(const LayerNeeds& needs, const CpuLabel& label, std::string_view where, Findings& into) {
  if (auto line = overlay_xattr_line(needs, where)) into.overlay_xattrs.push_back(std::move(*line));
  const auto machine = hw::elf_machine_of(label.architecture);
  for (const auto& file : needs.files) {
    ++into.programs;
    if (machine && (file.identity.machine != *machine || file.identity.elf_class != hw::ElfClass::elf64)) {
      into.uncovered.push_back(fmt::format("{} is a {} ({})", file.path, hw::elf_file_description(file.identity), where));
      into.uncovered_programs[file.path].insert("wrong architecture");
      continue;
    }
    if (!file.scan_error.empty()) {
      into.uncovered.push_back(file.scan_error);
      into.uncovered_programs[file.path].insert("unreadable code");
      continue;
    }
    if (file.needed_level) {
      into.noted_level = std::max(into.noted_level.value_or(hw::X86Level::v1), *file.needed_level);
      if (*file.needed_level > label.level) {
        into.uncovered.push_back(fmt::format(
            "{} says in its GNU property note (GNU_PROPERTY_X86_ISA_1_NEEDED) that it needs {}", file.path,
            hw::x86_level_name(*file.needed_level)));
        into.uncovered_programs[file.path].insert(hw::x86_level_name(*file.needed_level) + " note");
      }
    }
    for (const auto& function : file.functions) {
      const bool dispatched = hw::is_dispatched(function.dispatch) || selects_code_at_run_time(file.path);
      if (!dispatched) {
        for (const auto& use : function.uses) into.needed.insert(use.feature);
      }
      const auto missing = features_beyond(function, label.allowed);
      if (missing.empty()) continue;
      auto& programs = dispatched ? into.dispatched_programs : into.uncovered_programs;
      for (const auto& use : function.uses) {
        if (!label.allowed.contains(use.feature) && hw::is_instruction_set_feature(use.feature)) {
          programs[file.path].insert(use.feature);
        }
      }
      auto line = fmt::format("{}: function {} needs {}", file.path, function.name, missing);
      if (hw::is_dispatched(function.dispatch)) {
        into.dispatched.push_back(fmt::format("{}, {}", line, hw::dispatch_name(function.dispatch, function.dispatched_by)));
      } else if (selects_code_at_run_time(file.path)) {
        into.dispatched.push_back(fmt::format("{}, in a runtime library that selects its code by CPUID", line));
      } else {
        into.uncovered.push_back(std::move(line));
      }
    }
  }
}

std::string program_summary(const std::map<std::string, std::set<std::string>>& programs, std::size_t shown) {
  std::vector<std::string> parts;
  for (const auto& [path, features] : programs) {
    if (parts.size() == shown) break;
    parts.push_back(fmt::format("{} ({})", path.substr(path.rfind('/') + 1),
                                util::join(std::vector<std::string>(features.begin(), features.end()), ", ")));
  }
  return util::join(parts, ", ") +
         (programs.size() > shown ? fmt::format("; and {} more", programs.size() - shown) : std::string());
}

std::string first_lines(const std::vector<std::string>& lines, std::size_t shown) {
  shown = std::min(lines.size(), shown);
  std::vector<std::string> first(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(shown));
  return util::join(first, "; ") +
         (lines.size() > shown ? fmt::format("; and {} more", lines.size() - shown) : std::string());
}

}  // namespace hwimg::verify
