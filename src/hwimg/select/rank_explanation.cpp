#include "hwimg/select/rank_explanation.hpp"

#include <fmt/format.h>

namespace hwimg::select {
namespace {

// The considered GPU the variant's code serves worst, which key 2 compares.
hw::ComputeCapability worst_served(const Requirements& req, const HostView& host) {
  std::optional<hw::Serving> worst;
  hw::ComputeCapability capability;
  for (const auto& gpu : host.gpus) {
    if (!gpu.capability) continue;
    if (const auto serving = hw::best_serving(req.gpu_targets, *gpu.capability); !worst || serving < *worst) {
      worst = serving;
      capability = *gpu.capability;
    }
  }
  return capability;
}

// The variant's best code for `device` and how it serves it: "compute_80 (PTX JIT) on 9.0".
std::string code_on(const Requirements& req, hw::ComputeCapability device) {
  const auto serving = hw::best_serving(req.gpu_targets, device);
  for (const auto& target : req.gpu_targets) {
    if (hw::serve(target, device) == serving) {
      return fmt::format("{} ({}) on {}", target.name(), hw::serve_kind_name(serving.kind), device.str());
    }
  }
  return fmt::format("no code for {}", device.str());
}

std::string cpu_level_text(const Requirements& req) {
  return req.x86_level ? hw::x86_level_name(*req.x86_level) : std::string("no x86-64 level");
}

std::string cuda_text(const Requirements& req) {
  return req.cuda ? "CUDA " + req.cuda->str() : std::string("no CUDA");
}

// The first key of RankKey's order on which `lower` loses, in words; the chosen variant's name is
// `name`.
std::string losing_key(const Verdict& lower, const Verdict& chosen, const HostView& host, const std::string& name) {
  const auto& a = lower.key;
  const auto& b = chosen.key;
  const auto& req = lower.requirements;
  const auto& best = chosen.requirements;
  if (a.uses_gpu != b.uses_gpu) return fmt::format("runs on the CPU only, where {} uses the GPU", name);
  if (a.uses_gpu && a.gpu_serving != b.gpu_serving) {
    // On the GPU it serves worst, the chosen one's code is better still: its own worst is.
    const auto device = worst_served(req, host);
    return fmt::format("its GPU code is {}, where {} has {}", code_on(req, device), name, code_on(best, device));
  }
  if (a.native_cuda != b.native_cuda) {
    return fmt::format("{} runs only through minor-version compatibility, where {} runs natively", cuda_text(req), name);
  }
  if (a.bundled_driver != b.bundled_driver) {
    return fmt::format("uses the host's driver, mounted by NVIDIA's toolkit, where {} bundles driver {}", name,
                       best.bundled_driver->str());
  }
  if (a.cpu_level != b.cpu_level) {
    return fmt::format("{} is a lower CPU level than {}'s {}", cpu_level_text(req), name, cpu_level_text(best));
  }
  if (a.named_cpu_target != b.named_cpu_target) {
    return fmt::format("{} is a generic level, where {} is built for {}", cpu_level_text(req), name,
                       best.cpu_target->name);
  }
  if (a.cpu_feature_count != b.cpu_feature_count) {
    return fmt::format("uses fewer of this CPU's features ({}, where {} uses {})", a.cpu_feature_count, name,
                       b.cpu_feature_count);
  }
  if (a.cuda != b.cuda) return fmt::format("{} is older than {}'s {}", cuda_text(req), name, cuda_text(best));
  return fmt::format("ties with {} on every key; it comes later in the index", name);
}

}  // namespace

std::string ranking_rule() {
  return "ranking: rank 1 is chosen; the other variants that run here follow, ordered by GPU use, then GPU code "
         "quality, native CUDA, a bundled driver, CPU level, a named CPU target, CPU features used, newer CUDA, index order "
         "(docs/selection.md#ranking)";
}

std::string rank_reason(const Verdict& lower, const Verdict& chosen, const HostView& host) {
  const auto& name = chosen.requirements.name;
  return fmt::format("ranks below {}: {}", name, losing_key(lower, chosen, host, name));
}

}  // namespace hwimg::select
