#pragma once
// `hwimg inspect REF`: an image index, its variants with platform and annotations, layers, sizes.

#include <string>

#include "hwimg/commands/registry_flags.hpp"
#include "hwimg/inspect/inspect.hpp"

namespace hwimg::commands {

struct InspectArguments {
  std::string reference;  // oci:DIR[:TAG] or a registry reference
  inspect::Format format = inspect::Format::table;
  RegistryFlags registry;
};

// One GET of the index and one per variant manifest for a registry; no config or layer.
[[nodiscard]] Result<int> run_inspect(const InspectArguments& arguments);

}  // namespace hwimg::commands
