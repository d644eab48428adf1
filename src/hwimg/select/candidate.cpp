#include "hwimg/select/candidate.hpp"

#include <algorithm>

#include "hwimg/hw/target_hints.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::select {
namespace {

namespace key = oci::annotation;

std::optional<std::string> lookup(const oci::Annotations& annotations, std::string_view key) {
  const auto found = annotations.find(std::string(key));
  if (found == annotations.end()) {
    return std::nullopt;
  }
  return found->second;
}

// Go's strconv.ParseBool, which the NVIDIA container toolkit uses for NVIDIA_DISABLE_REQUIRE.
bool go_bool_true(std::string_view value) {
  return value == "1" || value == "t" || value == "T" || value == "true" || value == "TRUE" || value == "True";
}

void read_cpu(const oci::Annotations& annotations, Requirements& out) {
  if (const auto level = lookup(annotations, key::cpu_level)) {
    if (const auto x86 = hw::parse_x86_level(*level)) {
      out.x86_level = *x86;
    } else if (const auto* target = hw::find_cpu_target(*level)) {
      out.cpu_level_target = target;
    } else {
      out.problems.push_back(fmt::format("annotation {}: unknown CPU level '{}'{}", key::cpu_level,
                                         *level, hw::cpu_target_hint(*level)));
    }
  }
  if (const auto name = lookup(annotations, key::cpu_target); name && !name->empty()) {
    out.cpu_target = hw::find_cpu_target(*name);
    if (out.cpu_target == nullptr) {
      out.problems.push_back(fmt::format("annotation {}: unknown CPU target '{}'{}", key::cpu_target,
                                         *name, hw::cpu_target_hint(*name)));
    }
  }
  if (const auto features = lookup(annotations, key::cpu_features)) {
    for (const auto& feature : util::split(*features, ',')) {
      if (const auto trimmed = util::trim(feature); !trimmed.empty()) {
        out.cpu_features.insert(hw::canonical_feature_name(trimmed));
      }
    }
  }
}

void read_gpu(const oci::Annotations& annotations, Requirements& out) {
  if (const auto version = lookup(annotations, key::cuda_version)) {
    out.cuda = hw::parse_cuda_version(*version);
    if (!out.cuda) {
      out.problems.push_back(fmt::format("annotation {}: '{}' is not a CUDA version such as 12.8",
                                         key::cuda_version, *version));
    }
  }
  if (const auto targets = lookup(annotations, key::gpu_targets)) {
    for (const auto& name : util::split(*targets, ',')) {
      const auto trimmed = util::trim(name);
      if (trimmed.empty()) {
        continue;
      }
      if (auto target = hw::parse_gpu_target(trimmed)) {
        out.gpu_targets.push_back(*target);
      } else {
        out.problems.push_back(fmt::format("annotation {}: {}", key::gpu_targets, target.error().message));
      }
    }
  }
  if (const auto driver = lookup(annotations, key::driver_bundled)) {
    out.bundled_driver = hw::DriverVersion::parse(*driver);
    if (!out.bundled_driver) {
      out.problems.push_back(fmt::format("annotation {}: '{}' is not a driver version such as 535.104.05",
                                         key::driver_bundled, *driver));
    }
  }
}

std::string platform_or_digest(const Requirements& out, const oci::Descriptor& descriptor) {
  if (out.platform) {
    return out.platform->str();
  }
  return descriptor.digest.short_str();
}

}  // namespace

bool needs_config(const oci::Descriptor& descriptor) {
  return !key::has_hwimg_pairs(descriptor.annotations);
}

hw::FeatureSet Requirements::required_cpu_features() const {
  hw::FeatureSet features = cpu_features;
  if (x86_level) {
    features.merge(hw::x86_level_features(*x86_level));
  }
  for (const auto* target : {cpu_level_target, cpu_target}) {
    if (target != nullptr) {
      for (const auto& feature : target->features) {
        if (hw::is_instruction_set_feature(feature)) {
          features.insert(feature);
        }
      }
    }
  }
  return features;
}

std::vector<NamedRequire> nvidia_requirements(const std::vector<std::string>& env,
                                                       std::vector<std::string>& problems) {
  std::vector<std::pair<std::string, std::string>> requires_;
  std::optional<std::string> cuda_version;
  bool has_require_cuda = false;
  for (const auto& entry : env) {
    const auto equals = entry.find('=');
    const auto name = entry.substr(0, equals);
    const auto value = equals == std::string::npos ? std::string() : entry.substr(equals + 1);
    if (name == "NVIDIA_DISABLE_REQUIRE" && go_bool_true(value)) {
      return {};
    }
    if (name == "CUDA_VERSION") {
      cuda_version = value;
    }
    if (name.starts_with("NVIDIA_REQUIRE_") && !name.starts_with("NVIDIA_REQUIRE_JETPACK")) {
      has_require_cuda = has_require_cuda || name == "NVIDIA_REQUIRE_CUDA";
      requires_.emplace_back(name, value);
    }
  }
  if (!has_require_cuda && cuda_version) {
    // A legacy CUDA image: the toolkit requires cuda>=MAJOR.MINOR of its CUDA_VERSION.
    const auto parts = util::split(*cuda_version, '.');
    if (parts.size() >= 2) {
      requires_.emplace_back("CUDA_VERSION", fmt::format("cuda>={}.{}", parts[0], parts[1]));
    }
  }
  std::vector<NamedRequire> expressions;
  for (const auto& [name, value] : requires_) {
    if (auto expression = hw::parse_nvidia_require(value)) {
      expressions.push_back({name, std::move(*expression)});
    } else {
      problems.push_back(fmt::format("{}: {}", name, expression.error().message));
    }
  }
  return expressions;
}

Requirements requirements_of(const Candidate& candidate) {
  Requirements out;
  const auto& descriptor = candidate.descriptor;
  out.platform = descriptor.platform;
  if (!out.platform && candidate.config && !candidate.config->platform.architecture.empty()) {
    out.platform = candidate.config->platform;
  }
  static const oci::Annotations no_labels;
  const auto* annotations =
      &key::variant_pairs_source(descriptor.annotations, candidate.config ? candidate.config->labels : no_labels);
  out.annotated = key::has_hwimg_pairs(*annotations);
  if (out.annotated) {
    read_cpu(*annotations, out);
    read_gpu(*annotations, out);
  }
  if (!out.x86_level && out.cpu_level_target == nullptr && out.platform && out.platform->architecture == "amd64") {
    out.x86_level = hw::x86_level_from_oci_variant(out.platform->variant);
    if (!out.x86_level) {
      out.problems.push_back(fmt::format("platform {}: unknown amd64 variant '{}' (expected v1 to v4)",
                                         out.platform->str(), out.platform->variant));
    }
  }
  if (candidate.config) {
    out.nvidia_require = nvidia_requirements(candidate.config->env, out.problems);
  }
  out.name = lookup(*annotations, key::variant).value_or(platform_or_digest(out, descriptor));
  return out;
}

}  // namespace hwimg::select
