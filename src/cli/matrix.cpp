#include <map>
#include <string>

#include "commands.hpp"
#include "hwimg/matrix/matrix_command.hpp"

namespace hwimg::cli {

void add_matrix_command(CLI::App& app, Action& action) {
  auto* command = app.add_subcommand("matrix", "Show the variants a matrix file expands to, without building");
  auto path = std::make_shared<std::string>();
  auto format = std::make_shared<matrix::MatrixFormat>(matrix::MatrixFormat::table);
  auto skip = std::make_shared<bool>(false);
  command->add_option("FILE", *path, "Matrix file (YAML)")->required();
  const std::map<std::string, matrix::MatrixFormat> formats{
      {"table", matrix::MatrixFormat::table}, {"json", matrix::MatrixFormat::json},
      {"github", matrix::MatrixFormat::github}};
  command->add_option("--format", *format, "Output: table, json, or a GitHub Actions strategy.matrix")
      ->transform(CLI::CheckedTransformer(formats, CLI::ignore_case));
  command->add_flag("--skip-unsupported", *skip,
                    "Drop combinations the toolkits or compilers cannot build, with a warning");
  command->callback([&action, path, format, skip] {
    action = [path, format, skip] {
      return matrix::run_matrix_command(*path, *format,
                                        *skip ? matrix::SkipUnsupported::yes : matrix::SkipUnsupported::no);
    };
  });
}

}  // namespace hwimg::cli
