#include <map>
#include <memory>
#include <string>

#include "commands.hpp"
#include "hwimg/commands/matrix.hpp"

namespace hwimg::cli {

void define_matrix_command(CLI::App& subcommand, Action& action) {
  auto* command = &subcommand;
  auto arguments = std::make_shared<commands::MatrixArguments>();
  auto skip = std::make_shared<bool>(false);
  command->add_option("FILE", arguments->file, "Matrix file (YAML)")->required();
  const std::map<std::string, matrix::MatrixFormat> formats{
      {"table", matrix::MatrixFormat::table}, {"json", matrix::MatrixFormat::json},
      {"github", matrix::MatrixFormat::github}};
  command->add_option("--format", arguments->format, "Output: table, json, or a GitHub Actions strategy.matrix")
      ->transform(CLI::CheckedTransformer(formats, CLI::ignore_case));
  command->add_flag("--skip-unsupported", *skip,
                    "Drop combinations the toolkits or compilers cannot build, with a warning");
  command->callback([&action, arguments, skip] {
    arguments->skip = *skip ? matrix::SkipUnsupported::yes : matrix::SkipUnsupported::no;
    action = [arguments] { return commands::run_matrix(*arguments); };
  });
}

}  // namespace hwimg::cli
