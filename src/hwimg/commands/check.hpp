#pragma once
// `hwimg check REF`: whether that image runs on this host, for init containers and Slurm prologs
// (docs/selection.md#check), now that NVIDIA's toolkit in CDI mode no longer checks NVIDIA_REQUIRE_CUDA.

#include "hwimg/commands/select.hpp"

namespace hwimg::commands {

enum class CheckFormat { text, json };

struct CheckArguments {
  JudgeArguments judge;
  CheckFormat format = CheckFormat::text;
};

// A single manifest is judged by its own org.hwimg.* pairs (else its platform and NVIDIA_REQUIRE_*),
// an index by whether `select` finds a variant. Prints why it runs on stdout and returns 0, or
// prints every reason on stderr and returns 3.
[[nodiscard]] Result<int> run_check(const CheckArguments& arguments);

}  // namespace hwimg::commands
