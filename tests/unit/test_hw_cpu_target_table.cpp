#include <doctest/doctest.h>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

using namespace hwimg;
using namespace hwimg::hw;

// The table against the recorded copy of archspec-json's cpu/microarchitectures.json
// (tests/data/archspec/README.md names its commit).
namespace {

using json = nlohmann::json;

json archspec_targets() {
  const auto text = util::read_file(std::string(HWIMG_TEST_DATA_DIR) + "/archspec/microarchitectures.json");
  REQUIRE_MESSAGE(text.has_value(), text.error().message);
  return json::parse(*text).at("microarchitectures");
}

// hwimg spells archspec's generic levels as the psABI does.
std::string archspec_name(std::string_view name) {
  if (name == "x86-64-v1") return "x86_64";
  return name.starts_with("x86-64-v") ? fmt::format("x86_64_v{}", name.back()) : std::string(name);
}

std::string hwimg_name(const std::string& name) {
  if (name == "x86_64") return "x86-64-v1";
  return name.starts_with("x86_64_v") ? fmt::format("x86-64-v{}", name.back()) : name;
}

// The family an archspec entry belongs to: its first parent's root.
std::string root_of(const json& targets, std::string name) {
  while (!targets.at(name).at("from").empty()) {
    name = targets.at(name).at("from").at(0).get<std::string>();
  }
  return name;
}

// Three parts, missing ones 0: archspec's plain tuples would put "4.2" before "4.2.0".
std::vector<int> version_tuple(const std::string& text) {
  std::vector<int> parts;
  for (const auto& part : util::split(text, '.')) {
    parts.push_back(std::stoi(part));
  }
  parts.resize(3);
  return parts;
}

// archspec's optimization_flags for GCC: the first entry whose "min:max" range holds the version.
std::optional<std::string> archspec_gcc_flags(const json& entry, const std::string& name, int major, int minor) {
  const std::vector<int> version{major, minor, 0};
  for (const auto& flags : entry.at("compilers").value("gcc", json::array())) {
    const auto range = util::split(flags.at("versions").get<std::string>(), ':');
    const bool above = range.at(0).empty() || version_tuple(range.at(0)) <= version;
    const bool below = range.at(1).empty() || version <= version_tuple(range.at(1));
    if (above && below) {
      auto text = flags.at("flags").get<std::string>();
      const auto spelled = flags.value("name", name);
      for (auto at = text.find("{name}"); at != std::string::npos; at = text.find("{name}")) {
        text.replace(at, 6, spelled);
      }
      return text;
    }
  }
  return std::nullopt;
}

bool is_level(const CpuTarget& target) {
  return target.source == "x86-64 psABI";
}

}  // namespace

TEST_CASE("every archspec target of amd64 and arm64 is in the table with its parents, vendor and part") {
  const auto targets = archspec_targets();
  std::size_t compared = 0;
  for (const auto& [name, entry] : targets.items()) {
    const auto root = root_of(targets, name);
    if (root != "x86_64" && root != "aarch64") continue;
    CAPTURE(name);
    const auto* target = find_cpu_target(hwimg_name(name));
    REQUIRE(target != nullptr);
    CHECK(target->name == hwimg_name(name));
    CHECK(target->arch == (root == "x86_64" ? CpuArch::amd64 : CpuArch::arm64));
    std::vector<std::string> parents;
    for (const auto& parent : entry.at("from")) {
      parents.push_back(hwimg_name(parent.get<std::string>()));
    }
    CHECK(std::vector<std::string>(target->parents.begin(), target->parents.end()) == parents);
    CHECK(target->vendor == cpu_vendor_name(entry.at("vendor").get<std::string>()));
    const auto part = entry.value("cpupart", std::string());
    CHECK(target->cpu_part == (part == "Unknown" ? "" : part));
    CHECK((target->source == "archspec" || is_level(*target)));
    ++compared;
  }
  CHECK(compared == 55);  // the x86_64 and aarch64 families of the recorded copy
}

TEST_CASE("every table row is archspec's or names the GCC page it follows, and has GCC flags") {
  const auto targets = archspec_targets();
  std::vector<std::string_view> from_gcc;
  for (const auto& target : cpu_targets()) {
    CAPTURE(target.name);
    CHECK_FALSE(target.gcc.empty());  // `hwimg matrix` names a first GCC version for every target
    if (target.source == "archspec" || is_level(target)) {
      CHECK(targets.contains(archspec_name(target.name)));
    } else {
      CHECK(target.source.starts_with("https://gcc.gnu.org/"));
      CHECK_FALSE(targets.contains(archspec_name(target.name)));
      from_gcc.push_back(target.name);
    }
  }
  CHECK(from_gcc == std::vector<std::string_view>{"graniterapids"});
  CHECK(find_cpu_target("armv9.1a") == nullptr);  // not archspec's; armv9.2a's parents are archspec's
}

TEST_CASE("features are archspec's, inherited from every ancestor") {
  const auto targets = archspec_targets();
  for (const auto& target : cpu_targets()) {
    if (target.source != "archspec") continue;
    CAPTURE(target.name);
    FeatureSet expected;
    std::vector<std::string_view> lineage{target.name};
    lineage.insert(lineage.end(), target.ancestors.begin(), target.ancestors.end());
    for (const auto name : lineage) {
      const auto* ancestor = find_cpu_target(name);
      if (is_level(*ancestor)) {
        expected.insert(ancestor->features.begin(), ancestor->features.end());  // glibc's sets, kept as they are
        continue;
      }
      for (const auto& feature : targets.at(archspec_name(name)).at("features")) {
        expected.insert(canonical_feature_name(feature.get<std::string>()));
      }
    }
    CHECK(fmt::format("{}", fmt::join(target.features, " ")) == fmt::format("{}", fmt::join(expected, " ")));
  }
}

TEST_CASE("GCC flags are archspec's first matching entry for every GCC version") {
  const auto targets = archspec_targets();
  for (const auto& target : cpu_targets()) {
    if (target.source != "archspec" && !is_level(target)) continue;
    const auto name = archspec_name(target.name);
    for (int major = 4; major <= 16; ++major) {
      for (int minor = 0; minor <= 9; ++minor) {
        CAPTURE(target.name);
        CAPTURE(major);
        CAPTURE(minor);
        const auto ours = gcc_flags(target, major, minor);
        const auto reference = archspec_gcc_flags(targets.at(name), name, major, minor);
        // The psABI levels keep their own first versions: where they offer flags, archspec's.
        if (is_level(target) && !ours) continue;
        CHECK(ours.value_or("(none)") == reference.value_or("(none)"));
      }
    }
  }
}
