#pragma once
// How `inspect --verify` shows what each variant's code needs against its label: a table with a
// verdict per variant, then the code each label does not cover, file, function and instruction.

#include <string>
#include <vector>

#include "hwimg/verify/image_verify.hpp"

namespace hwimg::inspect {

[[nodiscard]] std::string verification_table(const std::vector<verify::VariantVerification>& variants);

// Whether every variant that was verified is covered by its label.
[[nodiscard]] bool all_covered(const std::vector<verify::VariantVerification>& variants);

}  // namespace hwimg::inspect
