#include "hwimg/select/gpu_rule.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "hwimg/util/strings.hpp"

namespace hwimg::select {
namespace {

// The GPUs one reason names: those of one unserved capability, or one GPU of unknown capability.
struct UnservedGroup {
  std::optional<hw::ComputeCapability> capability;
  std::vector<HostGpu> gpus;
};

void add_unserved(std::vector<UnservedGroup>& groups, const HostGpu& gpu) {
  const auto same = std::ranges::find_if(groups, [&](const UnservedGroup& group) {
    return gpu.capability && group.capability == gpu.capability;
  });
  if (same == groups.end()) {
    groups.push_back({gpu.capability, {gpu}});
  } else {
    same->gpus.push_back(gpu);
  }
}

}  // namespace

std::string target_list(const std::vector<hw::GpuTarget>& targets) {
  std::vector<std::string> names;
  for (const auto& target : targets) {
    names.push_back(target.name());
  }
  return util::join(names, ", ");
}

std::string describe_gpus(const std::vector<HostGpu>& gpus) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_name;  // in host order
  for (const auto& gpu : gpus) {
    const auto found = std::ranges::find(by_name, gpu.name, &std::pair<std::string, std::vector<std::string>>::first);
    if (found == by_name.end()) {
      by_name.push_back({gpu.name, {std::to_string(gpu.index)}});
    } else {
      found->second.push_back(std::to_string(gpu.index));
    }
  }
  std::vector<std::string> parts;
  for (const auto& [name, indexes] : by_name) {
    parts.push_back(fmt::format("{} {}{}", indexes.size() == 1 ? "GPU" : "GPUs", util::join(indexes, ", "),
                                name.empty() ? std::string() : " (" + name + ")"));
  }
  return util::join(parts, ", ");
}

GpuOutcome check_gpu_code(const Requirements& req, const HostView& host, std::vector<std::string>& reasons,
                          std::vector<GpuFailure>& failures) {
  GpuOutcome outcome;
  if (!host.has_driver) {
    reasons.emplace_back("needs an NVIDIA GPU; host has no NVIDIA driver");
    return outcome;
  }
  if (host.gpus.empty()) {
    reasons.push_back(host.choice == GpuChoice::none
                          ? fmt::format("needs a GPU; the container gets none ({} none)", host.gpu_origin)
                          : std::string("needs a GPU; host has none"));
    return outcome;
  }
  std::vector<UnservedGroup> unserved;
  for (const auto& gpu : host.gpus) {
    if (!gpu.capability) {
      add_unserved(unserved, gpu);
      continue;
    }
    const auto serving = hw::best_serving(req.gpu_targets, *gpu.capability);
    outcome.worst = std::min(outcome.worst, serving);
    if (!serving.serves()) {
      add_unserved(unserved, gpu);
    } else if (!serving.by_sass()) {
      outcome.ptx_only.push_back(*gpu.capability);
    }
  }
  for (const auto& group : unserved) {
    auto reason = group.capability
                      ? fmt::format("{}: no code for compute capability {} (has {})", describe_gpus(group.gpus),
                                    group.capability->str(), target_list(req.gpu_targets))
                      : fmt::format("cannot tell whether it runs on {}: its compute capability is unknown",
                                    describe_gpus(group.gpus));
    for (const auto& gpu : group.gpus) {
      failures.push_back({gpu, reason});
    }
    reasons.push_back(std::move(reason));
  }
  return outcome;
}

}  // namespace hwimg::select
