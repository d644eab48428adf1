#pragma once
// `hwimg build RECIPE -o DIR`: every variant into one multi-variant index in an OCI layout.

#include "hwimg/build/builder.hpp"
#include "hwimg/commands/registry_flags.hpp"
#include "hwimg/compat/artifact.hpp"
#include "hwimg/commands/terminal_output.hpp"

namespace hwimg::commands {

struct BuildArguments {
  build::BuildRequest request;  // the flags; the environment fills SOURCE_DATE_EPOCH and cuda_root
  RegistryFlags registry;       // for registry base and builder images
  std::filesystem::path cache;  // --cache; empty: $XDG_CACHE_HOME/hwimg or ~/.cache/hwimg
  std::optional<std::string> cache_max_size;  // --cache-max-size; else HWIMG_CACHE_MAX_SIZE, else the default
  // --push REGISTRY/REPO:TAG; empty: none. The index, every variant and their TAG-<id> tags go there.
  std::string push;
  compat::CompatArtifacts compat = compat::CompatArtifacts::attach;  // --push: one NFD artifact per variant
};

// Prints one line per variant and the index on stdout; progress on stderr when stdout is a terminal.
[[nodiscard]] Result<int> run_build(BuildArguments arguments);

}  // namespace hwimg::commands
