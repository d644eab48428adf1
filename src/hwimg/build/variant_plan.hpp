#pragma once
// One variant to build: its id, platform, labels and the values of the recipe variables.

#include <string>
#include <vector>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/recipe/variables.hpp"

namespace hwimg::build {

struct VariantPlan {
  std::string id;
  oci::Platform platform;
  oci::Annotations annotations;             // org.hwimg.* pairs: index descriptor, manifest and labels
  std::vector<std::pair<std::string, std::string>> env;  // added to the config, e.g. NVIDIA_REQUIRE_CUDA
  recipe::Variables variables;              // every variable but ${out}, which the builder sets
  std::vector<std::string> gpu_targets;     // device code the binaries must embed (checked after the build)
};

// The OCI architecture name of this machine ("amd64", "arm64", ...).
[[nodiscard]] std::string host_architecture();

}  // namespace hwimg::build
