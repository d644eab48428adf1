#pragma once
// `hwimg cdi generate`: the CDI spec that gives bundled-driver variants this host's GPUs as
// device nodes only (docs/running.md#cdi).

#include <filesystem>
#include <optional>

#include "hwimg/util/error.hpp"

namespace hwimg::commands {

struct CdiGenerateArguments {
  std::optional<std::filesystem::path> host_file;  // facts instead of a live probe
  std::optional<std::filesystem::path> output;     // absent: standard output; else written atomically
};

// The spec for the GPUs of this host (or the facts file), with the nodes under $HWIMG_DEV_ROOT when
// set (stand-in nodes for tests). Returns 0.
[[nodiscard]] Result<int> run_cdi_generate(const CdiGenerateArguments& arguments);

}  // namespace hwimg::commands
