#pragma once
// `hwimg matrix FILE`: shows the expansion of a matrix without building.

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

// Prints the expansion to stdout and warnings and errors to stderr; exit code 1 when the matrix is
// invalid (every error listed), 0 otherwise.
[[nodiscard]] Result<int> run_matrix_command(const std::filesystem::path& path, MatrixFormat format,
                                             SkipUnsupported skip);

}  // namespace hwimg::matrix
