#include "hwimg/hw/cpu_levels.hpp"

#include <array>

#include <fmt/format.h>

namespace hwimg::hw {
namespace {

// glibc's sets (docs/compatibility.md#x86-64-levels); XSAVE stands for the invisible OSXSAVE on /proc.
constexpr std::array<std::string_view, 8> k_v1{"cmov", "cx8", "fpu", "fxsr", "mmx", "sse", "sse2", "syscall"};
constexpr std::array<std::string_view, 7> k_v2{"cx16", "lahf_lm", "pni", "popcnt", "sse4_1", "sse4_2", "ssse3"};
constexpr std::array<std::string_view, 9> k_v3{"abm", "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "xsave"};
constexpr std::array<std::string_view, 5> k_v4{"avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl"};

constexpr std::array<std::string_view, 8> k_not_instruction_set{
    "cpuid", "evtstrm", "flush_l1d", "hypervisor", "ospke", "pku", "tsc_adjust", "dgh"};

bool has_all(const FeatureSet& features, std::span<const std::string_view> required) {
  for (const auto name : required) {
    if (!features.contains(name)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string_view cpu_arch_name(CpuArch arch) {
  return arch == CpuArch::amd64 ? "amd64" : "arm64";
}

std::optional<CpuArch> parse_cpu_arch(std::string_view name) {
  if (name == "amd64" || name == "x86_64") {
    return CpuArch::amd64;
  }
  if (name == "arm64" || name == "aarch64") {
    return CpuArch::arm64;
  }
  return std::nullopt;
}

std::string canonical_feature_name(std::string_view name) {
  if (name == "sse3") {
    return "pni";
  }
  if (name == "lzcnt") {
    return "abm";
  }
  return std::string(name);
}

FeatureSet make_feature_set(std::span<const std::string> names) {
  FeatureSet set;
  for (const auto& name : names) {
    set.insert(canonical_feature_name(name));
  }
  return set;
}

bool is_instruction_set_feature(std::string_view name) {
  for (const auto excluded : k_not_instruction_set) {
    if (name == excluded) {
      return false;
    }
  }
  return true;
}

std::span<const std::string_view> x86_level_added_features(X86Level level) {
  switch (level) {
    case X86Level::v1: return k_v1;
    case X86Level::v2: return k_v2;
    case X86Level::v3: return k_v3;
    case X86Level::v4: return k_v4;
  }
  return {};
}

FeatureSet x86_level_features(X86Level level) {
  FeatureSet set;
  for (int n = 1; n <= x86_level_number(level); ++n) {
    for (const auto name : x86_level_added_features(static_cast<X86Level>(n))) {
      set.emplace(name);
    }
  }
  return set;
}

X86Level x86_level_of(const FeatureSet& features) {
  auto level = X86Level::v1;
  for (const auto next : {X86Level::v2, X86Level::v3, X86Level::v4}) {
    if (!has_all(features, x86_level_added_features(next))) {
      break;
    }
    level = next;
  }
  return level;
}

int x86_level_number(X86Level level) { return static_cast<int>(level); }

std::string x86_level_name(X86Level level) {
  return fmt::format("x86-64-v{}", x86_level_number(level));
}

std::optional<X86Level> parse_x86_level(std::string_view name) {
  if (name == "x86-64" || name == "x86_64") {
    return X86Level::v1;
  }
  for (const std::string_view prefix : {"x86-64-v", "x86_64_v"}) {
    if (name.size() == prefix.size() + 1 && name.starts_with(prefix)) {
      const char digit = name.back();
      if (digit >= '1' && digit <= '4') {
        return static_cast<X86Level>(digit - '0');
      }
    }
  }
  return std::nullopt;
}

std::string oci_variant(X86Level level) {
  return level == X86Level::v1 ? std::string() : fmt::format("v{}", x86_level_number(level));
}

std::optional<X86Level> x86_level_from_oci_variant(std::string_view variant) {
  if (variant.empty() || variant == "v1") {
    return X86Level::v1;
  }
  if (variant.size() == 2 && variant[0] == 'v' && variant[1] >= '2' && variant[1] <= '4') {
    return static_cast<X86Level>(variant[1] - '0');
  }
  return std::nullopt;
}

}  // namespace hwimg::hw
