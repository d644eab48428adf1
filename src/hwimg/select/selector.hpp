#pragma once
// The pure core of `hwimg select`: every candidate judged against a host, the compatible ones
// ranked, the best chosen (docs/selection.md#rules, docs/selection.md#ranking).

#include <optional>
#include <vector>

#include "hwimg/probe/host_facts.hpp"
#include "hwimg/select/candidate.hpp"
#include "hwimg/select/gpu_selection.hpp"
#include "hwimg/select/host_view.hpp"
#include "hwimg/select/rules.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::select {

struct Selection {
  HostView host;
  std::vector<Verdict> verdicts;  // one per candidate, in index order
  std::optional<std::size_t> chosen;  // position in `verdicts`

  [[nodiscard]] const Verdict* chosen_verdict() const { return chosen ? &verdicts[*chosen] : nullptr; }
};

// Fails only when `gpus` names a GPU the host does not have (a usage error).
[[nodiscard]] Result<Selection> select_variant(const std::vector<Candidate>& candidates,
                                               const probe::HostFacts& host, const GpuSelection& gpus);

}  // namespace hwimg::select
