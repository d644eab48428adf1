#pragma once
// Expands a matrix file into variants (docs/matrix.md): the axes' product, `exclude` and
// `include` with GitHub Actions semantics, `gpu: none` collapsing the cuda axis, `ptx: true`, and
// validation of every combination against the knowledge tables in hw/.

#include <filesystem>
#include <string>
#include <vector>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/matrix/matrix_file.hpp"
#include "hwimg/matrix/variant.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::matrix {

// Whether combinations the toolkits or compilers cannot build are errors or dropped with a warning.
enum class SkipUnsupported { no, yes };

struct ExpandOptions {
  SkipUnsupported skip = SkipUnsupported::no;
  // Where a toolkit is unless the matrix says otherwise: this followed by "cuda-X.Y".
  std::filesystem::path cuda_root = "/usr/local";
};

// GCC version `${cpu.march}` is written for when the matrix has no `gcc` key (Debian 12's).
inline constexpr std::string_view default_gcc_version = "12.2";

struct MatrixReport {
  std::vector<Variant> variants;      // in expansion order
  std::vector<std::string> warnings;  // "file:line:column: ..."
  std::vector<std::string> errors;    // every error, "file:line:column: ..."
};

[[nodiscard]] MatrixReport expand_matrix(const MatrixFile& file, const ExpandOptions& options);

// Reads and expands; fails only when the file cannot be read.
[[nodiscard]] Result<MatrixReport> check_matrix(const std::filesystem::path& path, const ExpandOptions& options);

struct MatrixExpansion {
  std::vector<Variant> variants;
  std::vector<std::string> warnings;
};

// What the builder calls: the variants, or one error listing each problem on its own line.
[[nodiscard]] Result<MatrixExpansion> load_matrix(const std::filesystem::path& path,
                                                 const ExpandOptions& options);

// The one variant a recipe without a matrix builds: the baseline of `arch`.
[[nodiscard]] Result<Variant> portable_variant(hw::CpuArch arch);

}  // namespace hwimg::matrix
