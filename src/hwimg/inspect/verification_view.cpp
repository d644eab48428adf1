#include "hwimg/inspect/verification_view.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "hwimg/inspect/detail/verification_json.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::inspect {
namespace {

constexpr std::size_t listed_lines = 8;

// "x86-64-v3 + aes, pclmulqdq", or "x86-64-v1" for code that needs nothing beyond the baseline;
// at most `shown` of the features no level has, the rest counted.
std::string needs_text(const verify::VariantVerification& variant, std::size_t shown = SIZE_MAX) {
  if (variant.label.architecture != "amd64") {
    return variant.findings.needed.empty() ? std::string("baseline")
                                           : util::join(std::vector<std::string>(variant.findings.needed.begin(),
                                                                                 variant.findings.needed.end()),
                                                        ", ");
  }
  const auto needs = verify::level_needs(variant.findings.needed);
  auto level = std::max(needs.level, variant.findings.noted_level.value_or(hw::X86Level::v1));
  auto text = hw::x86_level_name(level);
  if (needs.beyond_levels.empty()) return text;
  const auto listed = std::min(shown, needs.beyond_levels.size());
  text += " + " + util::join(std::vector<std::string>(needs.beyond_levels.begin(),
                                                      needs.beyond_levels.begin() + static_cast<std::ptrdiff_t>(listed)),
                             ", ");
  if (listed < needs.beyond_levels.size()) text += fmt::format(" and {} more", needs.beyond_levels.size() - listed);
  return text;
}

std::string verdict_text(const verify::VariantVerification& variant) {
  if (variant.skipped) return "not verified: " + *variant.skipped;
  if (variant.covered()) return "covered";
  return fmt::format("NOT COVERED ({} problem{})", variant.findings.uncovered.size(),
                     variant.findings.uncovered.size() == 1 ? "" : "s");
}

}  // namespace

bool all_covered(const std::vector<verify::VariantVerification>& variants) {
  return std::ranges::all_of(variants, [](const auto& v) { return v.skipped || v.covered(); });
}

std::string verification_table(const std::vector<verify::VariantVerification>& variants) {
  std::string text = "\nCPU code against each variant's label (docs/recipe.md#cpu-code)\n";
  text += fmt::format("{:<32} {:<20} {:<32} {:>8}  {}\n", "VARIANT", "LABEL", "CODE NEEDS", "PROGRAMS", "VERDICT");
  for (const auto& v : variants) {
    text += fmt::format("{:<32} {:<20} {:<32} {:>8}  {}\n", v.name, v.skipped ? "-" : v.label.name,
                        v.skipped ? "-" : needs_text(v, 2), v.findings.programs, verdict_text(v));
  }
  for (const auto& v : variants) {
    if (v.skipped) continue;
    if (!v.findings.uncovered.empty()) {
      text += fmt::format("\n{}: code that {} does not cover:\n", v.name, v.label.name);
      const auto shown = std::min(v.findings.uncovered.size(), listed_lines);
      for (std::size_t i = 0; i < shown; ++i) text += "  " + v.findings.uncovered[i] + "\n";
      if (v.findings.uncovered.size() > shown) {
        text += fmt::format("  and {} more (--format json lists every one)\n", v.findings.uncovered.size() - shown);
      }
    }
    if (!v.findings.dispatched_programs.empty()) {
      text += fmt::format("{}: dispatched code beyond {}, accepted, in {} programs: {}\n", v.name, v.label.name,
                          v.findings.dispatched_programs.size(), verify::program_summary(v.findings.dispatched_programs));
    }
  }
  // Once per layer, however many variants share it; a note, not a verdict on the CPU label.
  std::vector<std::string> overlay_lines;
  for (const auto& v : variants) {
    for (const auto& line : v.findings.overlay_xattrs) {
      if (std::ranges::find(overlay_lines, line) == overlay_lines.end()) overlay_lines.push_back(line);
    }
  }
  if (!overlay_lines.empty()) text += "\n";
  for (const auto& line : overlay_lines) text += "note: " + line + "\n";
  return text;
}

namespace detail {

nlohmann::json verification_json(const std::vector<verify::VariantVerification>& variants) {
  auto out = nlohmann::json::array();
  for (const auto& v : variants) {
    nlohmann::json item{{"variant", v.name}, {"platform", v.platform}, {"manifest", v.manifest.str()}};
    if (v.skipped) {
      item["skipped"] = *v.skipped;
      out.push_back(std::move(item));
      continue;
    }
    item["label"] = v.label.name;
    item["covered"] = v.covered();
    item["needs"] = needs_text(v);
    item["needed_features"] = v.findings.needed;
    item["programs"] = v.findings.programs;
    item["layers"] = v.layers;
    item["layers_scanned"] = v.layers_scanned;
    item["uncovered"] = v.findings.uncovered;
    item["dispatched"] = v.findings.dispatched;
    item["overlay_xattrs"] = v.findings.overlay_xattrs;
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace detail
}  // namespace hwimg::inspect
