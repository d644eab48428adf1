#include "commands.hpp"
#include "hwimg/inspect/inspect.hpp"

namespace hwimg::cli {

void add_inspect_command(CLI::App& app, Action& action) {
  auto reference = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("table");
  auto* cmd = app.add_subcommand("inspect", "Show an image index: variants, platforms, annotations, layers");
  cmd->add_option("reference", *reference, "oci:DIR[:TAG]")->required();
  cmd->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  cmd->callback([&action, reference, format] {
    action = [reference, format] {
      return inspect::run_inspect(*reference, *format == "json" ? inspect::Format::json : inspect::Format::table);
    };
  });
}

}  // namespace hwimg::cli
