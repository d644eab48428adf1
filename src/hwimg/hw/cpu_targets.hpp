#pragma once
// Named CPU targets: the x86-64 psABI levels and archspec's microarchitectures, with the lookups the
// matrix, the probe and the selector use (docs/compatibility.md#named-cpu-targets).

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/hw/cpu_levels.hpp"

namespace hwimg::hw {

// `-march`/`-mcpu` flags for GCC from version `major.minor` on (until a newer entry takes over).
struct GccFlags {
  int major = 0;
  int minor = 0;
  std::string_view flags;
};

struct CpuTarget {
  std::string_view name;         // "x86-64-v3" for levels, archspec's name otherwise ("zen4")
  CpuArch arch = CpuArch::amd64;
  std::string_view vendor;       // NFD spelling ("Intel", "AMD", "ARM", ...) or "generic"
  std::string_view cpu_part;     // aarch64 MIDR part ("0xd0c"), empty when not tied to one
  std::vector<std::string_view> parents;
  std::vector<std::string_view> ancestors;  // every transitive parent, nearest first
  FeatureSet features;           // full list, inherited features included, /proc/cpuinfo names
  X86Level level = X86Level::v1; // psABI level the features imply (amd64 only)
  std::vector<GccFlags> gcc;     // newest first
  std::string_view source;       // "archspec", "x86-64 psABI", or the URL of the GCC page the row follows

  [[nodiscard]] bool is_generic() const { return vendor == "generic"; }
};

// Every target of both architectures, levels first.
[[nodiscard]] std::span<const CpuTarget> cpu_targets();
// A level ("x86-64-v3", "x86_64_v3", "x86-64") or an archspec name ("zen4"); nullptr if unknown.
[[nodiscard]] const CpuTarget* find_cpu_target(std::string_view name);
// The canonical names, for "did you mean" suggestions.
[[nodiscard]] std::vector<std::string> cpu_target_names();

// True when `ancestor` is `target` or one of its (transitive) parents.
[[nodiscard]] bool descends_from(const CpuTarget& target, std::string_view ancestor);
[[nodiscard]] std::size_t ancestor_count(const CpuTarget& target);

// GCC flags for a compiler version, nullopt if that GCC cannot build for the target.
[[nodiscard]] std::optional<std::string> gcc_flags(const CpuTarget& target, int gcc_major, int gcc_minor);

struct CpuTargetCheck {
  bool vendor_matches = true;
  std::vector<std::string> missing_features;  // instruction-set features only, sorted
  [[nodiscard]] bool compatible() const { return vendor_matches && missing_features.empty(); }
};

// Whether a host with this vendor and these (canonical) features runs code built for `target`.
// Flags no compiler emits code for (pku, flush_l1d, ...) are not required.
[[nodiscard]] CpuTargetCheck cpu_target_compatible(const CpuTarget& target, std::string_view host_vendor,
                                                   const FeatureSet& host_features);

// archspec's host detection with the instruction-set rule: the deepest compatible target that
// descends from the best compatible generic level (the level itself when no named one fits).
// `cpu_part` is the aarch64 `CPU part` ("0xd0c"), empty on amd64.
[[nodiscard]] const CpuTarget& best_cpu_target(CpuArch arch, std::string_view vendor,
                                               const FeatureSet& features, std::string_view cpu_part = {});
// The named microarchitecture of a host, nullptr when only a generic level fits.
[[nodiscard]] const CpuTarget* best_microarch(CpuArch arch, std::string_view vendor,
                                              const FeatureSet& features, std::string_view cpu_part = {});

// The target of the host's vendor beyond its own (deeper than the one best_cpu_target picks) that
// it misses by the fewest instruction-set features, at most `max_missing`; the deepest of those.
// Hypervisors hide some: a Zen 5 VM without fsgsbase and rdseed is no zen5, an Emerald Rapids VM
// without waitpkg no sapphirerapids. The probe says which, so nobody wonders why such variants
// are passed over. nullopt when no target comes that close.
struct NearMiss {
  const CpuTarget* target = nullptr;
  std::vector<std::string> missing;  // sorted
};
[[nodiscard]] std::optional<NearMiss> nearest_missed_target(CpuArch arch, std::string_view vendor,
                                                            const FeatureSet& features, std::string_view cpu_part = {},
                                                            std::size_t max_missing = 3);

// NFD's vendor spelling for a CPUID vendor string ("GenuineIntel" -> "Intel"); unknown ones unchanged.
[[nodiscard]] std::string x86_vendor_name(std::string_view cpuid_vendor);
// NFD's vendor spelling for an aarch64 `CPU implementer` ("0x41" -> "ARM"); unknown ones unchanged.
[[nodiscard]] std::string arm_vendor_name(std::string_view implementer);
// Any spelling a facts file may carry ("AuthenticAMD", "0x41", "amd", "ARM") as NFD's ("AMD", "ARM");
// unknown vendors unchanged, so they still match no named target.
[[nodiscard]] std::string cpu_vendor_name(std::string_view vendor);

}  // namespace hwimg::hw
