#pragma once
// A matrix file as written (docs/matrix.md), its values checked by name and positioned for
// messages; expansion (expand.hpp) turns it into variants. yaml-cpp stays inside the .cpp.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::matrix {

struct SourcePosition {
  int line = 0;  // 1-based
  int column = 0;
};

// One value of an axis or of an exclude/include entry.
struct MatrixValue {
  std::string text;                // canonical, compared by exclude/include: "13.0", "sm_80+sm_90", "zen4"
  std::vector<std::string> items;  // gpu: the target names (or "none"); otherwise the one value
  SourcePosition at;
  bool valid = true;               // false: an error names it already
};

// Axis or entry key -> value; entries may also hold "ptx" and "cuda_home".
using MatrixCell = std::map<std::string, MatrixValue, std::less<>>;

struct MatrixAxis {
  std::string key;  // "cuda", "gpu", "cpu", "driver"
  std::vector<MatrixValue> values;
};

struct MatrixFile {
  std::string path;                 // as given, for "file:line:column" messages
  std::filesystem::path directory;  // relative paths in the file are relative to it
  std::vector<MatrixAxis> axes;     // in the order cuda, gpu, cpu, driver; absent axes left out
  std::vector<MatrixCell> exclude;
  std::vector<MatrixCell> include;
  bool ptx = false;
  std::optional<MatrixValue> cuda_home;  // may contain ${cuda.version}
  std::optional<MatrixValue> gcc;        // GCC version `${cpu.march}` is written for
  std::vector<std::string> errors;       // "file:line:column: message", in file order
};

// Reads and checks a matrix file; fails only when it cannot be read. Syntax, key, type and name
// errors are collected in `errors`.
[[nodiscard]] Result<MatrixFile> read_matrix_file(const std::filesystem::path& path);
// The same for text already in memory; `path` names it in messages.
[[nodiscard]] MatrixFile parse_matrix_text(std::string_view text, const std::filesystem::path& path);

}  // namespace hwimg::matrix
