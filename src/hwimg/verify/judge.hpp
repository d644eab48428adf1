#pragma once
// A layer's needs held against what a variant is labelled (docs/recipe.md#cpu-code): a program
// for another architecture, a function whose instructions need a feature the label does not
// promise, or a GNU ISA-needed note above the label's level is code the label does not cover;
// dispatched code (it runs only after a CPU check, or it is a runtime library that selects its
// code by CPUID) is listed apart and accepted.

#include <cstddef>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/cpu_levels.hpp"
#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/verify/code_needs.hpp"

namespace hwimg::verify {

// What a variant promises about the CPU it runs on.
struct CpuLabel {
  std::string architecture;  // OCI architecture: "amd64", "arm64"
  std::string name;          // "x86-64-v2", "zen4", or "linux/amd64" for an image without CPU labels
  hw::FeatureSet allowed;    // every instruction-set feature the label promises, the baseline's too
  hw::X86Level level = hw::X86Level::v1;  // amd64
};

// The label of a variant built for `target` (a level or a named target) on `architecture`.
[[nodiscard]] CpuLabel label_for(const hw::CpuTarget& target, std::string architecture);

struct Findings {
  std::vector<std::string> uncovered;   // code the label does not cover, one line per problem
  std::vector<std::string> dispatched;  // code beyond the label that runs only where the CPU has it
  // Per program: the features beyond the label of its code that is not dispatched, and of its code
  // that is ("wrong architecture" for a program for another machine).
  std::map<std::string, std::set<std::string>> uncovered_programs;
  std::map<std::string, std::set<std::string>> dispatched_programs;
  hw::FeatureSet needed;                // features of code that is not dispatched, beyond the baseline
  std::optional<hw::X86Level> noted_level;  // the highest GNU ISA-needed note
  std::size_t programs = 0;             // ELF programs and libraries judged
  // Not about the CPU: layers whose entries carry overlayfs xattrs, one line each (overlay_xattr_line).
  std::vector<std::string> overlay_xattrs;
};

// Adds what `needs` holds beyond `label` to `into`; `where` names the layer in architecture lines
// ("its own layer", "layer sha256:…").
void judge_layer(const LayerNeeds& needs, const CpuLabel& label, std::string_view where, Findings& into);

// "layer sha256:…: 3 entries carry overlayfs's own xattrs, which rootless Docker refuses to unpack:
// /opt (user.overlay.origin), …"; nothing for a layer without them.
[[nodiscard]] std::optional<std::string> overlay_xattr_line(const LayerNeeds& needs, std::string_view where);

// "wc (avx, avx2), libgcrypt.so.20 (aes, avx2); and 3 more": programs by file name with their features.
[[nodiscard]] std::string program_summary(const std::map<std::string, std::set<std::string>>& programs,
                                          std::size_t shown = 6);

// The first `shown` lines joined with "; ", the rest counted: "…; and 3 more".
[[nodiscard]] std::string first_lines(const std::vector<std::string>& lines, std::size_t shown = 4);

}  // namespace hwimg::verify
