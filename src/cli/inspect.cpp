#include "commands.hpp"
#include "hwimg/inspect/inspect.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void add_inspect_command(CLI::App& app, Action& action) {
  auto reference = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("table");
  auto options = std::make_shared<registry::ClientOptions>();
  auto* cmd = app.add_subcommand("inspect", "Show an image index: variants, platforms, annotations, layers");
  cmd->add_option("reference", *reference, "oci:DIR[:TAG] or REGISTRY/REPO[:TAG|@DIGEST]")->required();
  cmd->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  add_registry_options(*cmd, *options);
  cmd->callback([&action, reference, format, options] {
    action = [reference, format, options] {
      return inspect::run_inspect(*reference, *format == "json" ? inspect::Format::json : inspect::Format::table,
                                  *options);
    };
  });
}

}  // namespace hwimg::cli
