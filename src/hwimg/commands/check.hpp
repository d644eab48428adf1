#pragma once
// `hwimg check REF`: whether that image runs on this host, for init containers and Slurm prologs
// (docs/selection.md#check), now that NVIDIA's toolkit in CDI mode no longer checks NVIDIA_REQUIRE_CUDA.

#include "hwimg/commands/select.hpp"

namespace hwimg::commands {

enum class CheckFormat { text, json };
// --verify: the chosen variant's programs scanned and held against this host's CPU too.
enum class CodeCheck { labels_only, verify };

struct CheckArguments {
  JudgeArguments judge;
  CheckFormat format = CheckFormat::text;
  CodeCheck code = CodeCheck::labels_only;
};

// A single manifest is judged by its own org.hwimg.* pairs (else its platform and NVIDIA_REQUIRE_*),
// an index by whether `select` finds a variant. Prints why it runs on stdout and returns 0, or
// prints every reason on stderr and returns 3. With CodeCheck::verify, a variant whose code needs a
// feature this host's CPU lacks does not run here either (docs/recipe.md#cpu-code).
[[nodiscard]] Result<int> run_check(const CheckArguments& arguments);

}  // namespace hwimg::commands
