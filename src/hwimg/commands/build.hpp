#pragma once
// `hwimg build RECIPE -o DIR`: every variant into one multi-variant index in an OCI layout.

#include "hwimg/build/builder.hpp"
#include "hwimg/commands/terminal_output.hpp"

namespace hwimg::commands {

struct BuildArguments {
  build::BuildRequest request;  // the flags; the environment fills SOURCE_DATE_EPOCH and cuda_root
};

// Prints one line per variant and the index on stdout; progress on stderr when stdout is a terminal.
[[nodiscard]] Result<int> run_build(BuildArguments arguments);

}  // namespace hwimg::commands
