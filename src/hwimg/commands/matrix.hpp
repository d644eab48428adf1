#pragma once
// `hwimg matrix FILE`: the variants a matrix expands to, without building.

#include <filesystem>

#include "hwimg/matrix/report.hpp"

namespace hwimg::commands {

struct MatrixArguments {
  std::filesystem::path file;
  matrix::MatrixFormat format = matrix::MatrixFormat::table;
  matrix::SkipUnsupported skip = matrix::SkipUnsupported::no;
};

// Prints the expansion on stdout, warnings and errors on stderr; 1 when the matrix is invalid
// (every error listed).
[[nodiscard]] Result<int> run_matrix(const MatrixArguments& arguments);

}  // namespace hwimg::commands
