#pragma once
// `hwimg check REF`: whether that image runs on this host, for init containers and Slurm prologs
// (docs/selection.md#check), now that NVIDIA's toolkit in CDI mode no longer checks NVIDIA_REQUIRE_CUDA.

#include <filesystem>
#include <optional>
#include <string>

#include "hwimg/commands/registry_flags.hpp"
#include "hwimg/commands/select.hpp"

namespace hwimg::commands {

enum class CheckFormat { text, json };

struct CheckArguments {
  std::string reference;                            // oci:DIR[:TAG] or a registry reference
  std::optional<std::filesystem::path> host_file;  // facts instead of a live probe
  std::optional<std::string> gpus;                  // --gpus; absent: NVIDIA_VISIBLE_DEVICES, else all
  CheckFormat format = CheckFormat::text;
  Explain explain = Explain::no;
  RegistryFlags registry;
};

// A single manifest is judged by its own org.hwimg.* pairs (else its platform and NVIDIA_REQUIRE_*),
// an index by whether `select` finds a variant. Prints why it runs on stdout and returns 0, or
// prints every reason on stderr and returns 3.
[[nodiscard]] Result<int> run_check(const CheckArguments& arguments);

}  // namespace hwimg::commands
