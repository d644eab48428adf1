#pragma once
// The builder's check that a variant's x86-64 programs only use the instructions its CPU label
// promises (docs/recipe.md#cpu-code): every x86-64 executable and shared object in the variant's
// own layers and in its recipe's shared layers is decoded (hw::scan_x86_isa), and a function that
// needs a feature the variant's level or named target lacks (AVX2 in an x86-64-v2 variant) is
// refused, as is a GNU ISA-needed note above the level. Dispatched code (target_clones versions,
// IFUNC targets) is reported, not refused: it runs only where the CPU has the feature.

#include "hwimg/build/variant_plan.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::build {

// Fails (verify.cpu strict) or warns through `output` (warn) naming each file, function,
// instruction and feature; arm64 variants are left to the architecture check for now.
[[nodiscard]] Result<void> check_cpu_code(const VariantPlan& plan, util::Output& output);

}  // namespace hwimg::build
