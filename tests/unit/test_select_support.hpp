#pragma once
// Builders for the select tests: host facts and candidates as small as each case needs.

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/select/selector.hpp"

namespace select_test {

using namespace hwimg;

inline probe::HostFacts cpu_host(std::string level, std::string vendor = "AMD", std::vector<std::string> extra = {}) {
  probe::HostFacts facts;
  facts.cpu.arch = hw::CpuArch::amd64;
  facts.cpu.vendor = std::move(vendor);
  const auto parsed = hw::parse_x86_level(level).value();
  for (const auto& feature : hw::x86_level_features(parsed)) {
    facts.cpu.features.push_back(feature);
  }
  for (auto& feature : extra) {
    facts.cpu.features.push_back(std::move(feature));
  }
  probe::derive_cpu_facts(facts.cpu);
  return facts;
}

inline probe::HostFacts arm64_host(std::vector<std::string> features = {"asimd", "fp"}) {
  probe::HostFacts facts;
  facts.cpu.arch = hw::CpuArch::arm64;
  facts.cpu.vendor = "ARM";
  facts.cpu.features = std::move(features);
  return facts;
}

// Adds an NVIDIA driver and GPUs given as compute capabilities ("9.0").
inline probe::HostFacts with_gpus(probe::HostFacts facts, std::string driver, std::string cuda,
                                  std::initializer_list<std::string> capabilities, std::string brand = "NVIDIA") {
  probe::NvidiaFacts nvidia;
  nvidia.driver_version = std::move(driver);
  nvidia.cuda_driver_version = std::move(cuda);
  nvidia.source = "nvml";
  int index = 0;
  for (const auto& cc : capabilities) {
    probe::GpuFacts gpu;
    gpu.index = index;
    gpu.uuid = "GPU-0000000" + std::to_string(index);
    gpu.name = "GPU " + cc;
    gpu.compute_capability = cc;
    gpu.brand = brand;
    nvidia.gpus.push_back(gpu);
    ++index;
  }
  facts.nvidia = std::move(nvidia);
  return facts;
}

inline oci::Digest digest_of(const std::string& text) { return oci::Digest::sha256_of(text); }

// An hwimg variant: id plus annotations as key (without "org.hwimg.") = value.
inline select::Candidate variant(std::string id, std::vector<std::pair<std::string, std::string>> pairs,
                                 oci::Platform platform = {"linux", "amd64", ""}) {
  select::Candidate candidate;
  candidate.descriptor.media_type = "application/vnd.oci.image.manifest.v1+json";
  candidate.descriptor.digest = digest_of(id);
  candidate.descriptor.size = 100;
  candidate.descriptor.platform = std::move(platform);
  candidate.descriptor.annotations["org.hwimg.variant"] = id;
  for (auto& [key, value] : pairs) {
    candidate.descriptor.annotations["org.hwimg." + key] = std::move(value);
  }
  return candidate;
}

inline select::Candidate cpu_variant(const std::string& level, std::string target = {}) {
  const auto parsed = hw::parse_x86_level(level).value();
  std::vector<std::pair<std::string, std::string>> pairs{{"cpu.level", level}};
  if (!target.empty()) {
    pairs.emplace_back("cpu.target", target);
  }
  return variant(target.empty() ? "cpu-" + level : "cpu-" + target, std::move(pairs),
                 {"linux", "amd64", hw::oci_variant(parsed)});
}

inline select::Candidate gpu_variant(const std::string& id, const std::string& cuda, const std::string& targets,
                                     const std::string& level = "x86-64-v1") {
  const auto parsed = hw::parse_x86_level(level).value();
  return variant(id, {{"cuda.version", cuda}, {"gpu.targets", targets}, {"cpu.level", level}},
                 {"linux", "amd64", hw::oci_variant(parsed)});
}

// A variant made by others: platform only, with the environment of its config.
inline select::Candidate platform_variant(oci::Platform platform, std::vector<std::string> env = {}) {
  select::Candidate candidate;
  candidate.descriptor.media_type = "application/vnd.oci.image.manifest.v1+json";
  candidate.descriptor.digest = digest_of(platform.str() + "|" + std::to_string(env.size()));
  candidate.descriptor.size = 100;
  candidate.descriptor.platform = platform;
  candidate.config = select::ConfigFacts{platform, std::move(env), {}};
  return candidate;
}

inline select::Selection run(const std::vector<select::Candidate>& candidates, const probe::HostFacts& host,
                             const std::string& gpus = "all") {
  return select::select_variant(candidates, host, select::parse_gpu_selection(gpus, "--gpus").value()).value();
}

inline std::string chosen_name(const select::Selection& selection) {
  const auto* chosen = selection.chosen_verdict();
  return chosen == nullptr ? std::string("<none>") : chosen->requirements.name;
}

inline const select::Verdict& verdict_of(const select::Selection& selection, const std::string& name) {
  for (const auto& verdict : selection.verdicts) {
    if (verdict.requirements.name == name) {
      return verdict;
    }
  }
  throw std::runtime_error("no verdict named " + name);
}

}  // namespace select_test
