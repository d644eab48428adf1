#include <memory>
#include <string>

#include "choice_option.hpp"
#include "commands.hpp"
#include "hwimg/commands/matrix.hpp"

namespace hwimg::cli {

void define_matrix_command(CLI::App& subcommand, Action& action) {
  auto* command = &subcommand;
  auto arguments = std::make_shared<commands::MatrixArguments>();
  auto skip = std::make_shared<bool>(false);
  command->add_option("FILE", arguments->file, "Matrix file (YAML)")->required();
  add_choice_option<matrix::MatrixFormat>(*command, "--format", arguments->format,
                                          {{"table", matrix::MatrixFormat::table},
                                           {"json", matrix::MatrixFormat::json},
                                           {"github", matrix::MatrixFormat::github}},
                                          "Output: table, json, or a GitHub Actions strategy.matrix");
  command->add_flag("--skip-unsupported", *skip,
                    "Drop combinations the toolkits or compilers cannot build, with a warning");
  command->callback([&action, arguments, skip] {
    arguments->skip = *skip ? matrix::SkipUnsupported::yes : matrix::SkipUnsupported::no;
    action = [arguments] { return commands::run_matrix(*arguments); };
  });
}

}  // namespace hwimg::cli
