#include "hwimg/select/selector.hpp"

#include <algorithm>

namespace hwimg::select {

Result<Selection> select_variant(const std::vector<Candidate>& candidates, const probe::HostFacts& host,
                                 const GpuSelection& gpus) {
  HWIMG_TRY_ASSIGN(const auto considered, considered_gpus(gpus, host));
  Selection selection;
  selection.host = make_host_view(host, considered, gpus);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    selection.verdicts.push_back(judge(requirements_of(candidates[i]), selection.host, i));
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
