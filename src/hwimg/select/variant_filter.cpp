#include "hwimg/select/variant_filter.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hwimg/oci/annotations.hpp"
#include "hwimg/select/selector.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::select {

std::string variant_id(const Candidate& candidate) {
  return candidate.descriptor.annotation(oci::annotation::variant).value_or("");
}

Result<std::vector<std::size_t>> filter_variants(const std::vector<Candidate>& candidates,
                                                 const VariantFilter& filter) {
  std::set<std::size_t> kept;
  if (filter.empty()) {
    for (std::size_t i = 0; i < candidates.size(); ++i) kept.insert(i);
    return std::vector<std::size_t>(kept.begin(), kept.end());
  }
  std::vector<std::string> ids;
  for (const auto& candidate : candidates) ids.push_back(variant_id(candidate));
  for (const auto& wanted : filter.ids) {
    const auto found = std::ranges::find(ids, wanted);
    if (found == ids.end()) {
      std::vector<std::string> named;
      std::ranges::copy_if(ids, std::back_inserter(named), [](const std::string& id) { return !id.empty(); });
      const auto has = named.empty() ? std::string("none with an id") : fmt::format("{}", fmt::join(named, ", "));
      return fail_usage("failed to choose variants: the image has no variant \"{}\"{}; its variants: {}", wanted,
                        util::did_you_mean(wanted, named), has);
    }
    kept.insert(static_cast<std::size_t>(found - ids.begin()));
  }
  std::vector<std::string> refusals;
  for (const auto& host : filter.hosts) {
    HWIMG_TRY_ASSIGN(const auto selection, select_variant(candidates, host.facts, GpuSelection{}));
    std::size_t fits = 0;
    for (std::size_t i = 0; i < selection.verdicts.size(); ++i) {
      if (selection.verdicts[i].compatible()) {
        kept.insert(i);
        ++fits;
      }
    }
    if (fits == 0) refusals.push_back(host.name);
  }
  if (kept.empty()) {
    return fail("failed to choose variants: none of the {} variants runs on {} (`hwimg select --host FILE "
                "--explain` says why)", candidates.size(), fmt::join(refusals, ", "));
  }
  return std::vector<std::size_t>(kept.begin(), kept.end());
}

}  // namespace hwimg::select
