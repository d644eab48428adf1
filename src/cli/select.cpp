#include <memory>

#include "choice_option.hpp"
#include "commands.hpp"
#include "judge_options.hpp"

namespace hwimg::cli {
namespace {

struct SelectFlags {
  JudgeFlags judge;
  std::string format = "ref";
};

}  // namespace

void define_select_command(CLI::App& subcommand, Action& action) {
  auto flags = std::make_shared<SelectFlags>();
  auto* command = &subcommand;
  add_judge_options(
      *command, flags->judge, "oci:DIR[:TAG] or a registry reference",
      [&] {
        add_choice_option(*command, "--format", flags->format, {"ref", "json"}, "ref (one line) or json");
      },
      "Print every variant to stderr: chosen, compatible with its rank, or rejected with every reason");
  command->footer("Exit status 3 when no variant fits; every variant's reasons then go to stderr.");
  command->callback([flags, &action] {
    commands::SelectArguments arguments{judge_arguments(flags->judge),
                                        flags->format == "json" ? commands::SelectFormat::json
                                                                : commands::SelectFormat::reference};
    action = [arguments] { return commands::run_select(arguments); };
  });
}

}  // namespace hwimg::cli
