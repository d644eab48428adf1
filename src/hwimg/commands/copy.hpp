#pragma once
// `hwimg copy SRC DST`: an image between registries and layouts, optionally reduced to the
// variants a fleet needs (--variant, --for FACTS.json).

#include <filesystem>
#include <string>
#include <vector>

#include "hwimg/commands/data_format.hpp"
#include "hwimg/commands/registry_flags.hpp"

namespace hwimg::commands {

struct CopyArguments {
  std::string source;
  std::string destination;
  std::vector<std::string> variants;
  std::vector<std::filesystem::path> hosts;  // host-facts files (`hwimg probe --format json`)
  DataFormat format = DataFormat::text;
  RegistryFlags registry;
};

// Prints the summary line (or JSON) on stdout; progress on a terminal.
[[nodiscard]] Result<int> run_copy(const CopyArguments& arguments);

}  // namespace hwimg::commands
