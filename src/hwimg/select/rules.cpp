#include "hwimg/select/rules.hpp"

#include <algorithm>

#include "hwimg/hw/gpu_driver_floor.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::select {
namespace {

std::string join_names(const std::vector<std::string>& names) { return util::join(names, ", "); }

std::vector<std::string> missing_from(const hw::FeatureSet& needed, const hw::FeatureSet& have) {
  std::vector<std::string> missing;
  std::ranges::copy_if(needed, std::back_inserter(missing), [&](const std::string& f) { return !have.contains(f); });
  return missing;
}

std::string_view level_extension_name(hw::X86Level level) {
  switch (level) {
    case hw::X86Level::v1: return "the x86-64 baseline";
    case hw::X86Level::v2: return "SSE4.2";
    case hw::X86Level::v3: return "AVX2";
    case hw::X86Level::v4: return "AVX-512";
  }
  return "";
}

// Rule 1: same OS and architecture; arm64 images beyond v8 are refused as containerd does.
bool check_platform(const Requirements& req, const HostView& host, std::vector<std::string>& reasons) {
  if (!req.platform) {
    reasons.push_back("names no platform (os/architecture) in the index or its config");
    return false;
  }
  const auto& platform = *req.platform;
  if (platform.os != host.os || platform.architecture != host.arch) {
    reasons.push_back(fmt::format("built for {}; host is {}/{}", platform.str(), host.os, host.arch));
    return false;
  }
  if (platform.architecture == "arm64" && !req.annotated) {
    const auto& v = platform.variant;
    if (!(v.empty() || v == "8" || v == "v8" || v == "v8.0")) {
      reasons.push_back(fmt::format("built for {}; like containerd, hwimg runs only arm64/v8 images on arm64 hosts",
                                    platform.str()));
    }
  }
  return true;
}

void check_named_target(const hw::CpuTarget& target, const HostView& host, std::vector<std::string>& reasons) {
  if (hw::cpu_arch_name(target.arch) != host.arch) {
    reasons.push_back(fmt::format("CPU target {} is for {}; host is {}", target.name,
                                  hw::cpu_arch_name(target.arch), host.arch));
    return;
  }
  const auto check = hw::cpu_target_compatible(target, host.vendor, host.features);
  if (!check.vendor_matches) {
    reasons.push_back(fmt::format("{} needs an {} CPU; host CPU is {}", target.name, target.vendor,
                                  host.vendor.empty() ? std::string("of unknown vendor") : host.vendor));
  }
  if (!check.missing_features.empty()) {
    reasons.push_back(fmt::format("{} needs {}; host ({}) does not have them", target.name,
                                  join_names(check.missing_features), host.cpu_name));
  }
}

// Rule 2.
void check_cpu(const Requirements& req, const HostView& host, std::vector<std::string>& reasons) {
  if (req.x86_level && host.x86_level && *req.x86_level > *host.x86_level) {
    std::vector<std::string> groups;
    std::vector<std::string> missing;
    for (int n = hw::x86_level_number(*host.x86_level) + 1; n <= hw::x86_level_number(*req.x86_level); ++n) {
      const auto level = static_cast<hw::X86Level>(n);
      bool any = false;
      for (const auto feature : hw::x86_level_added_features(level)) {
        if (!host.features.contains(feature)) {
          missing.emplace_back(feature);
          any = true;
        }
      }
      if (any) {
        groups.emplace_back(level_extension_name(level));
      }
    }
    if (missing.empty()) {
      groups.push_back(hw::x86_level_name(*req.x86_level));
    }
    reasons.push_back(fmt::format("needs {}{}; host has {}", util::join(groups, " and "),
                                  missing.empty() ? "" : " (" + join_names(missing) + ")",
                                  hw::x86_level_name(*host.x86_level)));
  }
  for (const auto* target : {req.cpu_level_target, req.cpu_target}) {
    if (target != nullptr) {
      check_named_target(*target, host, reasons);
    }
  }
  // Features of the named target were judged with it; the annotation usually repeats them.
  auto listed = req.cpu_features;
  if (req.cpu_target != nullptr) {
    std::erase_if(listed, [&](const std::string& f) { return req.cpu_target->features.contains(f); });
  }
  if (const auto missing = missing_from(listed, host.features); !missing.empty()) {
    reasons.push_back(fmt::format("needs CPU features {}; host ({}) does not have them", join_names(missing),
                                  host.cpu_name));
  }
}

// Rule 4; returns whether compatibility is native.
bool check_cuda(const Requirements& req, const HostView& host, const GpuOutcome& gpus,
                std::vector<std::string>& reasons) {
  if (!req.cuda) {
    return true;
  }
  if (!host.has_driver) {
    if (!req.uses_gpu()) {
      reasons.push_back(fmt::format("needs an NVIDIA driver for CUDA {}; host has none", req.cuda->str()));
    }
    return true;
  }
  if (!host.cuda) {
    reasons.push_back(fmt::format("needs a driver for CUDA {}; host's CUDA driver version is unknown", req.cuda->str()));
    return true;
  }
  const auto compatibility = hw::cuda_compatibility(*req.cuda, *host.cuda, host.driver);
  const auto driver = hw::describe_host_driver(*host.cuda, host.driver);
  if (compatibility == hw::CudaCompatibility::none) {
    reasons.push_back(fmt::format("needs a driver for CUDA {}; {}", req.cuda->str(), driver));
    return true;
  }
  if (compatibility == hw::CudaCompatibility::minor_version) {
    std::vector<std::string> capabilities;
    for (const auto& cc : gpus.ptx_only) {
      if (std::ranges::find(capabilities, cc.str()) == capabilities.end()) {
        capabilities.push_back(cc.str());
      }
    }
    if (!capabilities.empty()) {
      reasons.push_back(fmt::format("needs a driver for CUDA {} to JIT its PTX for compute capability {} "
                                    "(minor-version compatibility runs SASS only); {}",
                                    req.cuda->str(), util::join(capabilities, ", "), driver));
    }
    return false;
  }
  return true;
}

// Rule 4: a GPU generation newer than the host's driver (docs/compatibility.md#gpu-driver-floors).
void check_gpu_driver_floors(const Requirements& req, const HostView& host, std::vector<std::string>& reasons,
                             std::vector<GpuFailure>& gpu_failures) {
  if (!req.cuda || !host.has_driver) {
    return;
  }
  std::vector<hw::GpuDevice> devices;
  for (const auto& gpu : host.gpus) {
    if (gpu.capability) {
      devices.push_back({gpu.index, *gpu.capability});
    }
  }
  for (auto& failure : hw::gpu_driver_floor_failures(devices, host.cuda, host.driver)) {
    for (const auto& gpu : host.gpus) {
      if (std::ranges::find(failure.gpu_indexes, gpu.index) != failure.gpu_indexes.end()) {
        gpu_failures.push_back({gpu, failure.reason});
      }
    }
    reasons.push_back(std::move(failure.reason));
  }
}

// Rule 5.
void check_bundled_driver(const Requirements& req, const HostView& host, std::vector<std::string>& reasons) {
  if (!req.bundled_driver) {
    return;
  }
  if (!host.driver) {
    reasons.push_back(fmt::format("bundles driver {}; host has {}", req.bundled_driver->str(),
                                  host.has_driver ? "a driver of unknown version" : "no NVIDIA driver"));
  } else if (!(*host.driver == *req.bundled_driver)) {
    reasons.push_back(fmt::format("bundles driver {}; host kernel driver is {} (they must be equal)",
                                  req.bundled_driver->str(), host.driver->str()));
  }
}

// NVIDIA_REQUIRE_* of images made by others, per considered GPU, as libnvidia-container does.
void check_nvidia_require(const Requirements& req, const HostView& host, std::vector<std::string>& reasons) {
  if (req.nvidia_require.empty() || !host.has_driver) {
    return;
  }
  hw::RequireHost require_host{host.cuda, host.driver, {}};
  for (const auto& gpu : host.gpus) {
    if (gpu.capability) {
      require_host.devices.push_back({*gpu.capability, gpu.brand});
    }
  }
  for (const auto& require : req.nvidia_require) {
    if (const auto failure = hw::unsatisfied_condition(require.expression, require_host)) {
      reasons.push_back(fmt::format("{}: {}; {}", require.variable, *failure,
                                    host.cuda ? hw::describe_host_driver(*host.cuda, host.driver)
                                              : std::string("host CUDA version unknown")));
    }
  }
}

std::string summarize(const Requirements& req, const RankKey& key, const HostView& host) {
  std::vector<std::string> parts;
  if (key.uses_gpu) {
    auto gpu = std::string(hw::serve_kind_name(key.gpu_serving.kind));
    if (key.gpu_serving.kind == hw::ServeKind::sass_lower_minor) {
      gpu += fmt::format(" (-{})", key.gpu_serving.minor_distance);
    }
    parts.push_back(gpu + " " + target_list(req.gpu_targets));
  } else if (req.uses_gpu()) {
    parts.emplace_back("GPU code unused");
  }
  if (req.cuda) {
    parts.push_back(fmt::format("CUDA {} {}", req.cuda->str(), key.native_cuda ? "native" : "minor-version compatible"));
  }
  if (req.bundled_driver) {
    parts.push_back("bundles driver " + req.bundled_driver->str());
  }
  if (req.cpu_target != nullptr) {
    parts.emplace_back(req.cpu_target->name);
  } else if (req.x86_level) {
    parts.push_back(hw::x86_level_name(*req.x86_level));
  } else if (req.cpu_level_target != nullptr) {
    parts.emplace_back(req.cpu_level_target->name);
  } else if (req.platform) {
    parts.push_back(req.platform->str());
  }
  if (!req.cpu_features.empty()) {
    parts.push_back("+" + util::join(std::vector<std::string>(req.cpu_features.begin(), req.cpu_features.end()), ","));
  }
  if (!req.nvidia_require.empty() && host.has_driver) {
    parts.emplace_back("NVIDIA_REQUIRE met");
  }
  return util::join(parts, ", ");
}

}  // namespace

std::strong_ordering RankKey::operator<=>(const RankKey& other) const {
  if (auto c = uses_gpu <=> other.uses_gpu; c != 0) return c;
  if (uses_gpu) {
    if (auto c = gpu_serving <=> other.gpu_serving; c != 0) return c;
  }
  if (auto c = native_cuda <=> other.native_cuda; c != 0) return c;
  if (auto c = bundled_driver <=> other.bundled_driver; c != 0) return c;
  if (auto c = cpu_level <=> other.cpu_level; c != 0) return c;
  if (auto c = named_cpu_target <=> other.named_cpu_target; c != 0) return c;
  if (auto c = cpu_feature_count <=> other.cpu_feature_count; c != 0) return c;
  if (auto c = cuda <=> other.cuda; c != 0) return c;
  return other.position <=> position;
}

Verdict judge(Requirements requirements, const HostView& host, std::size_t position) {
  Verdict verdict;
  auto& reasons = verdict.reasons;
  const auto& req = requirements;
  reasons = req.problems;
  if (check_platform(req, host, reasons)) {
    check_cpu(req, host, reasons);
  }
  GpuOutcome gpus;
  if (req.uses_gpu()) {
    gpus = check_gpu_code(req, host, reasons, verdict.gpu_failures);
  }
  const bool native = check_cuda(req, host, gpus, reasons);
  check_gpu_driver_floors(req, host, reasons, verdict.gpu_failures);
  check_bundled_driver(req, host, reasons);
  check_nvidia_require(req, host, reasons);

  auto& key = verdict.key;
  key.uses_gpu = req.uses_gpu() && !host.gpus.empty();
  key.gpu_serving = key.uses_gpu ? gpus.worst : hw::Serving{};
  key.native_cuda = native;
  key.bundled_driver = req.bundled_driver.has_value();
  key.cpu_level = req.x86_level ? hw::x86_level_number(*req.x86_level) : 0;
  key.named_cpu_target = req.cpu_target != nullptr;
  key.cpu_feature_count = req.required_cpu_features().size();
  key.cuda = req.cuda;
  key.position = position;
  if (verdict.compatible()) {
    verdict.summary = summarize(req, key, host);
  }
  verdict.requirements = std::move(requirements);
  return verdict;
}

}  // namespace hwimg::select
