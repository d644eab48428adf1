#include <memory>

#include "choice_option.hpp"
#include "commands.hpp"
#include "hwimg/commands/inspect.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_inspect_command(CLI::App& subcommand, Action& action) {
  auto arguments = std::make_shared<commands::InspectArguments>();
  auto format = std::make_shared<std::string>("table");
  auto* cmd = &subcommand;
  cmd->add_option("reference", arguments->reference, "oci:DIR[:TAG] or REGISTRY/REPO[:TAG|@DIGEST]")->required();
  add_choice_option(*cmd, "--format", *format, {"table", "json"}, "table or json");
  cmd->add_flag("--verify", arguments->verify_code,
                "also scan every variant's programs and hold what their instructions need against the variant's CPU "
                "label (exit status 3 when a label does not cover its code)");
  add_registry_options(*cmd, arguments->registry);
  cmd->callback([&action, arguments, format] {
    arguments->format = *format == "json" ? inspect::Format::json : inspect::Format::table;
    action = [arguments] { return commands::run_inspect(*arguments); };
  });
}

}  // namespace hwimg::cli
