#pragma once
// `hwimg inspect REF`: an image index, its variants with tags, platform, annotations, config,
// layers, sizes and referrers.

#include <string>

#include "hwimg/commands/registry_flags.hpp"
#include "hwimg/inspect/inspect.hpp"

namespace hwimg::commands {

struct InspectArguments {
  std::string reference;  // oci:DIR[:TAG] or a registry reference
  inspect::Format format = inspect::Format::table;
  bool verify_code = false;  // --verify: scan every variant's programs against its CPU label
  RegistryFlags registry;
};

// For a registry: one GET of the index, one per variant manifest and config, one of the first page
// of tags and one round for the referrers; no layer unless --verify, which reads every layer whose
// needs the cache does not hold. Returns 3 when --verify finds code a variant's label does not cover.
[[nodiscard]] Result<int> run_inspect(const InspectArguments& arguments);

}  // namespace hwimg::commands
