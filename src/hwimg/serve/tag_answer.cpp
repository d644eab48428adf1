#include "hwimg/serve/tag_answer.hpp"

#include <algorithm>

#include "hwimg/oci/annotations.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/select/image_source.hpp"
#include "hwimg/select/report.hpp"
#include "hwimg/select/selector.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::serve {
namespace {

// "cpu-x86-64-v4: needs avx512f; cuda13.0-sm90: no NVIDIA driver", short enough for a status line.
std::string short_reasons(const select::Selection& selection) {
  std::vector<std::string> parts;
  for (const auto& verdict : selection.verdicts) {
    parts.push_back(fmt::format("{}: {}", verdict.requirements.name,
                                verdict.reasons.empty() ? std::string("fits") : verdict.reasons.front()));
  }
  auto text = util::join(parts, "; ");
  constexpr std::size_t limit = 900;
  if (text.size() > limit) text = text.substr(0, limit) + "...";
  return text;
}

}  // namespace

bool is_hwimg_index(const registry::FetchedManifest& document) {
  if (!oci::media_type::is_index(document.media_type)) return false;
  const auto index = oci::parse_index(document.bytes);
  return index && std::ranges::any_of(index->manifests, [](const oci::Descriptor& d) {
           return oci::media_type::is_manifest(d.media_type) && oci::annotation::has_hwimg_pairs(d.annotations);
         });
}

Result<TagAnswer> answer_tag(const registry::FetchedManifest& document, std::string_view image,
                             image::ImageReader& reader, const probe::HostFacts& host,
                             const select::GpuSelection& gpus, ForeignImages foreign) {
  TagAnswer answer;
  const bool ours = is_hwimg_index(document);
  const bool judged = ours || (foreign == ForeignImages::select && (oci::media_type::is_index(document.media_type) ||
                                                                    oci::media_type::is_manifest(document.media_type)));
  if (!judged) {
    answer.kind = TagAnswer::Kind::unchanged;
    answer.bytes = document.bytes;
    answer.media_type = document.media_type;
    answer.digest = document.digest;
    return answer;
  }
  const oci::Descriptor root{document.media_type, document.digest, static_cast<std::int64_t>(document.bytes.size()),
                             {}, {}};
  HWIMG_TRY_ASSIGN(const auto candidates, select::read_candidates(reader, root));
  HWIMG_TRY_ASSIGN(const auto selection, select::select_variant(candidates, host, gpus));
  answer.explanation = select::render_explanation(image, selection);
  if (!selection.chosen) {
    answer.kind = TagAnswer::Kind::no_match;
    answer.reason = fmt::format("hwimg: no variant of {} runs on this node: {}", image, short_reasons(selection));
    return answer;
  }
  if (!oci::media_type::is_index(document.media_type)) {
    // A single image that runs here is what the upstream serves.
    answer.kind = TagAnswer::Kind::unchanged;
    answer.bytes = document.bytes;
    answer.media_type = document.media_type;
    answer.digest = document.digest;
    return answer;
  }
  const auto& chosen = candidates[*selection.chosen].descriptor;
  HWIMG_TRY_ASSIGN(answer.bytes, reader.read(chosen));
  answer.kind = TagAnswer::Kind::variant;
  answer.media_type = chosen.media_type;
  answer.digest = chosen.digest;
  answer.variant = selection.verdicts[*selection.chosen].requirements.name;
  return answer;
}

}  // namespace hwimg::serve
