#pragma once
// CPU architectures, feature sets (named as in /proc/cpuinfo) and the x86-64 psABI levels.

#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

namespace hwimg::hw {

enum class CpuArch { amd64, arm64 };

// OCI names: "amd64", "arm64".
[[nodiscard]] std::string_view cpu_arch_name(CpuArch arch);
// Accepts the OCI names and the kernel's ("x86_64", "aarch64").
[[nodiscard]] std::optional<CpuArch> parse_cpu_arch(std::string_view name);

// Feature names as /proc/cpuinfo prints them ("pni", not "sse3"; "abm" for LZCNT).
using FeatureSet = std::set<std::string, std::less<>>;

// Maps spellings other tools use to the /proc/cpuinfo name ("sse3" -> "pni", "lzcnt" -> "abm").
[[nodiscard]] std::string canonical_feature_name(std::string_view name);
[[nodiscard]] FeatureSet make_feature_set(std::span<const std::string> names);

// False for flags no compiler emits code for (pku, flush_l1d, tsc_adjust, evtstrm, ...): VMs hide
// them, so a named target never requires them (docs/selection.md#rule-2-cpu).
[[nodiscard]] bool is_instruction_set_feature(std::string_view name);

enum class X86Level : int { v1 = 1, v2 = 2, v3 = 3, v4 = 4 };

// The features a level adds over the one below (v1: the x86-64 baseline).
[[nodiscard]] std::span<const std::string_view> x86_level_added_features(X86Level level);
// Every feature the level requires, lower levels included, sorted.
[[nodiscard]] FeatureSet x86_level_features(X86Level level);
// The highest level whose features are all in `features`; at least v1 (every amd64 CPU is v1).
[[nodiscard]] X86Level x86_level_of(const FeatureSet& features);

[[nodiscard]] int x86_level_number(X86Level level);
// "x86-64-v3"; the baseline is "x86-64-v1".
[[nodiscard]] std::string x86_level_name(X86Level level);
// Accepts "x86-64-vN", archspec's "x86_64_vN", and "x86-64"/"x86_64" for v1.
[[nodiscard]] std::optional<X86Level> parse_x86_level(std::string_view name);
// The OCI platform variant: "" for v1 (skopeo, podman and CRI-O only fall back to a variant-less
// entry), "v2".."v4" otherwise.
[[nodiscard]] std::string oci_variant(X86Level level);
// The inverse: "" and "v1" give v1; anything else unknown gives nullopt.
[[nodiscard]] std::optional<X86Level> x86_level_from_oci_variant(std::string_view variant);

}  // namespace hwimg::hw
