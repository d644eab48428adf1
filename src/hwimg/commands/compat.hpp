#pragma once
// `hwimg compat show REF`: the NFD image-compatibility artifacts attached to an image's variants.

#include <optional>
#include <string>

#include "hwimg/commands/registry_flags.hpp"

namespace hwimg::commands {

struct CompatShowArguments {
  std::string reference;               // REGISTRY/REPO[:TAG|@DIGEST]
  std::optional<std::string> variant;  // --variant ID: only that one
  bool json = false;                   // --format json
  RegistryFlags registry;
};

// Prints the YAML of each artifact (one: verbatim), or JSON; 1 when a variant has none.
[[nodiscard]] Result<int> run_compat_show(const CompatShowArguments& arguments);

}  // namespace hwimg::commands
