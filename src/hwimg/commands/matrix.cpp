#include "hwimg/commands/matrix.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "hwimg/commands/environment.hpp"
#include "hwimg/commands/terminal_output.hpp"

namespace hwimg::commands {

Result<int> run_matrix(const MatrixArguments& arguments) {
  HWIMG_TRY_ASSIGN(const auto report, matrix::check_matrix(arguments.file, {arguments.skip, cuda_root()}));
  TerminalOutput output(Progress::hidden, Verbose::no);
  for (const auto& warning : report.warnings) output.warning(warning);
  if (arguments.format == matrix::MatrixFormat::json) {
    fmt::print("{}", matrix::render_json(report));
  } else if (report.errors.empty()) {
    fmt::print("{}", arguments.format == matrix::MatrixFormat::table ? matrix::render_table(report)
                                                                     : matrix::render_github(report));
  }
  std::fflush(stdout);
  for (const auto& error : report.errors) fmt::print(stderr, "hwimg: error: {}\n", error);
  return report.errors.empty() ? 0 : 1;
}

}  // namespace hwimg::commands
