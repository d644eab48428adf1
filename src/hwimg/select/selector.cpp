#include "hwimg/select/selector.hpp"

#include <algorithm>
#include <map>

namespace hwimg::select {
namespace {

// What each candidate needs, named so that messages tell them apart: entries of an index nobody
// labelled are named by their platform, which several may share ("linux/amd64" for two CUDA
// builds), and those get their manifest's short digest too.
std::vector<Requirements> requirements_named_apart(const std::vector<Candidate>& candidates) {
  std::vector<Requirements> all;
  std::map<std::string, std::size_t> uses;
  for (const auto& candidate : candidates) ++uses[all.emplace_back(requirements_of(candidate)).name];
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (uses[all[i].name] > 1) all[i].name += fmt::format(" ({})", candidates[i].descriptor.digest.short_str());
  }
  return all;
}

}  // namespace

Result<Selection> select_variant(const std::vector<Candidate>& candidates, const probe::HostFacts& host,
                                 const GpuSelection& gpus) {
  HWIMG_TRY_ASSIGN(const auto considered, considered_gpus(gpus, host));
  Selection selection;
  selection.host = make_host_view(host, considered, gpus);
  auto requirements = requirements_named_apart(candidates);
  for (std::size_t i = 0; i < requirements.size(); ++i) {
    selection.verdicts.push_back(judge(std::move(requirements[i]), selection.host, i));
  }
  std::vector<std::size_t> compatible;
  for (std::size_t i = 0; i < selection.verdicts.size(); ++i) {
    if (selection.verdicts[i].compatible()) {
      compatible.push_back(i);
    }
  }
  std::ranges::sort(compatible, [&](std::size_t a, std::size_t b) {
    return selection.verdicts[a].key > selection.verdicts[b].key;
  });
  for (std::size_t rank = 0; rank < compatible.size(); ++rank) {
    selection.verdicts[compatible[rank]].rank = rank + 1;
  }
  if (!compatible.empty()) {
    selection.chosen = compatible.front();
  }
  return selection;
}

}  // namespace hwimg::select
