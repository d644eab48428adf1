#pragma once
// The expansion of a matrix rendered for people, for scripts and for GitHub Actions.

#include <filesystem>
#include <string>

#include "hwimg/matrix/expand.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::matrix {

enum class MatrixFormat { table, json, github };

// The report rendered: a table for people; JSON `{"variants": [{"id", "cuda", "gpu", "cpu",
// "platform", "annotations", "nvidia_require_cuda", "variables"}], "warnings": [...],
// "errors": [...]}`; or a GitHub Actions
// `strategy.matrix` object `{"include": [{"variant", ...}]}` on one line.
[[nodiscard]] std::string render_table(const MatrixReport& report);
[[nodiscard]] std::string render_json(const MatrixReport& report);
[[nodiscard]] std::string render_github(const MatrixReport& report);

}  // namespace hwimg::matrix
