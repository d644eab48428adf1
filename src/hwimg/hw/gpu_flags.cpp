#include "hwimg/hw/gpu_flags.hpp"

#include <vector>

#include <fmt/format.h>

#include "hwimg/util/strings.hpp"

namespace hwimg::hw {

namespace {

std::string virtual_name(const GpuTarget& target) {
  return GpuTarget{CodeKind::ptx, target.capability, target.features}.name();
}

}  // namespace

std::string nvcc_gencode_flags(std::span<const GpuTarget> targets) {
  std::vector<std::string> flags;
  for (const auto& target : targets) {
    flags.push_back(fmt::format("-gencode arch={},code={}", virtual_name(target), target.name()));
  }
  return util::join(flags, " ");
}

std::string cmake_cuda_architectures(std::span<const GpuTarget> targets) {
  std::vector<std::string> entries;
  for (const auto& target : targets) {
    const auto name = target.name();
    const auto number = name.substr(name.find('_') + 1);
    entries.push_back(fmt::format("{}-{}", number, target.kind == CodeKind::sass ? "real" : "virtual"));
  }
  return util::join(entries, ";");
}

}  // namespace hwimg::hw
