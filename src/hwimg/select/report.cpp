#include "hwimg/select/report.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "hwimg/oci/media_types.hpp"
#include "hwimg/select/rank_explanation.hpp"

namespace hwimg::select {
namespace {

nlohmann::ordered_json platform_json(const std::optional<oci::Platform>& platform) {
  if (!platform) {
    return nullptr;
  }
  nlohmann::ordered_json out{{"os", platform->os}, {"architecture", platform->architecture}};
  if (!platform->variant.empty()) {
    out["variant"] = platform->variant;
  }
  return out;
}

// Which GPU failed and why, for tools that act on it (docs/selection.md#select-output).
nlohmann::ordered_json gpu_failures_json(const std::vector<GpuFailure>& failures) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& failure : failures) {
    const auto& gpu = failure.gpu;
    out.push_back({{"gpu",
                    {{"index", gpu.index},
                     {"uuid", gpu.uuid},
                     {"name", gpu.name},
                     {"compute_capability", gpu.capability ? nlohmann::ordered_json(gpu.capability->str())
                                                           : nlohmann::ordered_json(nullptr)}}},
                   {"reason", failure.reason}});
  }
  return out;
}

std::string status_text(const Verdict& verdict, bool chosen) {
  if (chosen) {
    return "chosen";
  }
  return verdict.rank ? fmt::format("rank {}", *verdict.rank) : std::string("rejected");
}

}  // namespace

std::string chosen_reference(const ImageSource& source, const Selection& selection) {
  if (!selection.chosen) {
    return {};
  }
  return variant_reference(source, source.candidates[*selection.chosen],
                           selection.verdicts[*selection.chosen].requirements.name);
}

std::string render_json(const ImageSource& source, const Selection& selection) {
  nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < selection.verdicts.size(); ++i) {
    const auto& verdict = selection.verdicts[i];
    candidates.push_back({{"variant", verdict.requirements.name},
                          {"digest", source.candidates[i].descriptor.digest.str()},
                          {"platform", platform_json(verdict.requirements.platform)},
                          {"compatible", verdict.compatible()},
                          {"rank", verdict.rank ? nlohmann::ordered_json(*verdict.rank) : nlohmann::ordered_json(nullptr)},
                          {"reasons", verdict.reasons},
                          {"gpu_failures", gpu_failures_json(verdict.gpu_failures)}});
  }
  nlohmann::ordered_json out{{"reference", nullptr}, {"digest", nullptr}, {"variant", nullptr}, {"candidates", candidates}};
  if (const auto* chosen = selection.chosen_verdict()) {
    out["reference"] = chosen_reference(source, selection);
    out["digest"] = source.candidates[*selection.chosen].descriptor.digest.str();
    out["variant"] = chosen->requirements.name;
  }
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string render_check(const ImageSource& source, const Selection& selection, std::string_view host) {
  const auto* chosen = selection.chosen_verdict();
  if (chosen == nullptr) {
    return {};
  }
  const auto& reference = source.image.reference.text;
  if (!oci::media_type::is_index(source.image.root.media_type)) {
    return fmt::format("{} runs on {}: {}\n", reference, host, chosen->summary);
  }
  return fmt::format("{} runs on {} as variant {} ({}): {}\n", reference, host, chosen->requirements.name,
                     chosen_reference(source, selection), chosen->summary);
}

std::string render_explanation(const ImageSource& source, const Selection& selection) {
  return render_explanation(source.name() + (source.tag().empty() ? "" : ":" + source.tag()), selection);
}

std::string render_explanation(std::string_view image, const Selection& selection) {
  std::size_t name_width = std::string_view("VARIANT").size();
  std::size_t platform_width = std::string_view("PLATFORM").size();
  for (const auto& verdict : selection.verdicts) {
    name_width = std::max(name_width, verdict.requirements.name.size());
    platform_width = std::max(platform_width, verdict.requirements.platform ? verdict.requirements.platform->str().size() : 1);
  }
  auto text = fmt::format("host: {}\nimage: {} ({} variant{})\n", describe_host(selection.host), image,
                          selection.verdicts.size(), selection.verdicts.size() == 1 ? "" : "s");
  const auto* chosen = selection.chosen_verdict();
  if (chosen != nullptr) text += ranking_rule() + "\n";
  text += fmt::format("{:<{}}  {:<{}}  {:<8}  {}\n", "VARIANT", name_width, "PLATFORM", platform_width, "RESULT", "WHY");
  for (std::size_t i = 0; i < selection.verdicts.size(); ++i) {
    const auto& verdict = selection.verdicts[i];
    const auto platform = verdict.requirements.platform ? verdict.requirements.platform->str() : std::string("-");
    const auto status = status_text(verdict, selection.chosen == i);
    auto lines = verdict.compatible() ? std::vector<std::string>{verdict.summary} : verdict.reasons;
    if (verdict.compatible() && chosen != nullptr && chosen != &verdict) {
      lines.push_back(rank_reason(verdict, *chosen, selection.host));
    }
    for (std::size_t line = 0; line < lines.size(); ++line) {
      text += line == 0 ? fmt::format("{:<{}}  {:<{}}  {:<8}  {}\n", verdict.requirements.name, name_width, platform,
                                      platform_width, status, lines[line])
                        : fmt::format("{:<{}}  {}\n", "", name_width + platform_width + 12, lines[line]);
    }
  }
  return text;
}

}  // namespace hwimg::select
