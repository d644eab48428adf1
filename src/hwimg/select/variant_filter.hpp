#pragma once
// Which variants of an image a fleet needs: those named by id, and those that run on any of the
// given hosts (judged by the selector's own rules, all GPUs considered). `hwimg copy` and
// `hwimg export` keep only these.

#include <string>
#include <vector>

#include "hwimg/probe/host_facts.hpp"
#include "hwimg/select/candidate.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::select {

struct NamedHost {
  std::string name;  // the facts file, for messages
  probe::HostFacts facts;
};

struct VariantFilter {
  std::vector<std::string> ids;    // --variant: exact variant ids
  std::vector<NamedHost> hosts;    // --for: every variant compatible with one of them

  [[nodiscard]] bool empty() const { return ids.empty() && hosts.empty(); }
};

// The kept candidates' positions, in index order; every candidate when the filter is empty. An id
// no variant has is a usage error naming the nearest id; a filter that keeps nothing is an error
// with each host's reasons in one line.
[[nodiscard]] Result<std::vector<std::size_t>> filter_variants(const std::vector<Candidate>& candidates,
                                                               const VariantFilter& filter);

// The variant id of a candidate (org.hwimg.variant), else "".
[[nodiscard]] std::string variant_id(const Candidate& candidate);

}  // namespace hwimg::select
