#pragma once
// What `select --explain` says about the ranking (docs/selection.md#ranking): what the ranks mean,
// in one line, and for each compatible variant below the chosen one the first ranking key on which
// it loses to it, so "rank 3" comes with a reason rather than a repeat of the variant's level.

#include <string>

#include "hwimg/select/host_view.hpp"
#include "hwimg/select/rules.hpp"

namespace hwimg::select {

// "ranking: rank 1 is chosen; the other variants that run here follow, ordered by ...".
[[nodiscard]] std::string ranking_rule();

// Why `lower` (compatible) ranks below `chosen` on `host`: "ranks below cpu-zen4: a generic level,
// where cpu-zen4 is built for zen4". Both verdicts come from the same selection.
[[nodiscard]] std::string rank_reason(const Verdict& lower, const Verdict& chosen, const HostView& host);

}  // namespace hwimg::select
