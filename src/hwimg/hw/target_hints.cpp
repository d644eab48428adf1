#include "hwimg/hw/target_hints.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "hwimg/hw/cpu_levels.hpp"
#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::hw {
namespace {

// docs/compatibility.md#target-name-hints: NVIDIA's architecture and product names and their
// compute capabilities (developer.nvidia.com/cuda-gpus and cuda-legacy-gpus).
struct NamedGpu {
  std::string_view name;
  std::vector<int> capabilities;  // 86 for 8.6, as in sm_86
};

const std::vector<NamedGpu>& named_gpus() {
  static const std::vector<NamedGpu> table{
      {"Kepler", {35, 37}},       {"Maxwell", {50, 52, 53}},   {"Pascal", {60, 61, 62}},
      {"Volta", {70, 72}},        {"Turing", {75}},            {"Ampere", {80, 86, 87}},
      {"Ada Lovelace", {89}},     {"Hopper", {90}},            {"Blackwell", {100, 103, 110, 120, 121}},
      {"Blackwell Ultra", {103}}, {"Rubin", {107}},
      {"K80", {37}},    {"M40", {52}},   {"M60", {52}},    {"P4", {61}},     {"P40", {61}},
      {"P100", {60}},   {"V100", {70}},  {"T4", {75}},     {"A2", {86}},     {"A10", {86}},
      {"A16", {86}},    {"A30", {80}},   {"A40", {86}},    {"A100", {80}},   {"L4", {89}},
      {"L40", {89}},    {"L40S", {89}},  {"H100", {90}},   {"H200", {90}},   {"GH200", {90}},
      {"B200", {100}},  {"GB200", {100}}, {"B300", {103}}, {"GB300", {103}}, {"GB10", {121}},
      {"DGX Spark", {121}}, {"Jetson Nano", {53}}, {"Jetson TX2", {62}}, {"Jetson Xavier", {72}},
      {"Jetson Orin", {87}}, {"Jetson Thor", {110}},
      {"GeForce RTX 20xx", {75}}, {"GeForce RTX 30xx", {86}}, {"GeForce RTX 40xx", {89}},
      {"GeForce RTX 50xx", {120}},
  };
  return table;
}

// "Ada Lovelace", "ada-lovelace" and "AdaLovelace" alike; "NVIDIA H100", "Tesla T4", "Jetson AGX
// Orin" as "h100", "t4", "orin"; a GeForce model ("RTX 4090") as its series ("rtx40xx").
std::string squeezed(std::string_view text) {
  std::string out;
  for (const char c : util::to_lower(text)) {
    if (c != ' ' && c != '-' && c != '_') out += c;
  }
  for (const std::string_view prefix : {"nvidia", "tesla", "geforce", "jetson", "agx"}) {
    if (out.starts_with(prefix) && out.size() > prefix.size()) out.erase(0, prefix.size());
  }
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  if (out.size() == 7 && out.starts_with("rtx") && std::ranges::all_of(out.substr(3), is_digit)) {
    out.replace(5, 2, "xx");
  }
  return out;
}

bool is_known_gpu_target(const std::string& name) {
  static const auto names = gpu_target_names();
  return std::ranges::find(names, name) != names.end();
}

// The nvcc names a compute-capability spelling stands for: TORCH_CUDA_ARCH_LIST's "9.0", "9.0a",
// "8.6+PTX" (SASS, plus PTX with +PTX) and CUDA_ARCHITECTURES' "90" (SASS and PTX), "90-real",
// "90-virtual". Empty when `name` is neither, or names a target no toolkit has.
std::vector<std::string> targets_of_capability_spelling(std::string_view name) {
  const auto lower = util::to_lower(name);
  std::string_view text = lower;
  std::string tail;  // what follows sm_ or compute_: "90", "90a"
  bool sass = true;
  bool ptx = true;
  if (text.find('.') != std::string_view::npos) {
    ptx = text.ends_with("+ptx");
    if (ptx) text.remove_suffix(4);
    std::string suffix;
    if (text.ends_with('a') || text.ends_with('f')) {
      suffix = text.back();
      text.remove_suffix(1);
    }
    const auto capability = parse_compute_capability(text);
    if (!capability) return {};
    tail = fmt::format("{}{}", capability->number(), suffix);
  } else {
    // CMake's entries are the target names without their prefix; being a known one checks the rest.
    if (text.ends_with("-real")) {
      text.remove_suffix(5);
      ptx = false;
    } else if (text.ends_with("-virtual")) {
      text.remove_suffix(8);
      sass = false;
    }
    tail = std::string(text);
  }
  std::vector<std::string> targets;
  if (sass) targets.push_back("sm_" + tail);
  if (ptx) targets.push_back("compute_" + tail);
  if (!std::ranges::all_of(targets, is_known_gpu_target)) return {};
  return targets;
}

std::string capability_list(const std::vector<int>& numbers) {
  std::vector<std::string> parts;
  for (const auto number : numbers) parts.push_back(ComputeCapability{number / 10, number % 10}.str());
  return util::join(parts, ", ");
}

std::string alternatives(const std::vector<std::string>& names) {
  if (names.size() < 2) return names.empty() ? std::string() : names.front();
  const std::vector<std::string> head(names.begin(), names.end() - 1);
  return fmt::format("{} or {}", util::join(head, ", "), names.back());
}

// The target whose GCC flags say `-march=NAME` or `-mcpu=NAME`: its newest flags first, then any
// older ones (zen4's older flags say -march=znver3, which is zen3's own).
const CpuTarget* target_of_gcc_name(std::string_view name, std::string& flag) {
  const auto lower = util::to_lower(name);
  for (const bool newest_only : {true, false}) {
    for (const auto& target : cpu_targets()) {
      const auto count = newest_only ? std::min<std::size_t>(1, target.gcc.size()) : target.gcc.size();
      for (std::size_t i = 0; i < count; ++i) {
        for (const auto& word : util::split(target.gcc[i].flags, ' ')) {
          for (const std::string_view option : {"-march=", "-mcpu="}) {
            if (word.starts_with(option) && word.substr(option.size()) == lower) {
              flag = std::string(option.substr(0, option.size() - 1));
              return &target;
            }
          }
        }
      }
    }
  }
  return nullptr;
}

}  // namespace

std::string gpu_target_hint(std::string_view name) {
  if (const auto targets = targets_of_capability_spelling(name); !targets.empty()) {
    const auto meant = targets.size() == 1 ? targets.front() : fmt::format("[{}]", util::join(targets, ", "));
    return fmt::format(" (did you mean {}? GPU targets are nvcc's names: sm_XY for SASS, compute_XY for PTX)", meant);
  }
  const auto wanted = squeezed(name);
  for (const auto& gpu : named_gpus()) {
    if (squeezed(gpu.name) != wanted) continue;
    std::vector<std::string> targets;
    for (const auto number : gpu.capabilities) {
      if (auto target = fmt::format("sm_{}", number); is_known_gpu_target(target)) targets.push_back(std::move(target));
    }
    return fmt::format(" ({} is compute capability {}: did you mean {}?)", gpu.name,
                       capability_list(gpu.capabilities), alternatives(targets));
  }
  if (wanted == "native") {
    return " (a variant names the GPU code it carries; hwimg probe prints this host's compute capabilities)";
  }
  return util::did_you_mean(name, gpu_target_names());
}

std::string cpu_target_hint(std::string_view name) {
  std::string flag;
  if (const auto* target = target_of_gcc_name(name, flag)) {
    return fmt::format(" (did you mean {}? {} is its GCC {} name)", target->name, name, flag);
  }
  // Docker's platform variant of a level: linux/amd64/v3 runs on x86-64-v3.
  auto text = util::to_lower(name);
  for (const std::string_view prefix : {"linux/", "amd64/"}) {
    if (text.starts_with(prefix)) text.erase(0, prefix.size());
  }
  if (text.size() == 2 && text[0] == 'v' && parse_x86_level("x86-64-" + text)) {
    return fmt::format(" (did you mean x86-64-{}?)", text);
  }
  if (text == "native") {
    return " (a variant names the CPU it is built for; hwimg probe prints this host's level and microarchitecture)";
  }
  return util::did_you_mean(name, cpu_target_names());
}

}  // namespace hwimg::hw
