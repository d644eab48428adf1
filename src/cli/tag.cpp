#include <memory>

#include "commands.hpp"
#include "format_option.hpp"
#include "hwimg/commands/registry_commands.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_tag_command(CLI::App& subcommand, Action& action) {
  struct Arguments {
    std::string reference;
    std::vector<std::string> tags;
    commands::DataFormat format = commands::DataFormat::text;
    commands::RegistryFlags flags;
  };
  auto args = std::make_shared<Arguments>();
  auto* command = &subcommand;
  command->add_option("REFERENCE", args->reference, "REGISTRY/REPO:TAG or REGISTRY/REPO@DIGEST")->required();
  command->add_option("NEWTAG", args->tags, "tags to add")->required();
  add_data_format_option(*command, args->format, "REF:NEWTAG@DIGEST per tag", "{\"digest\", \"references\"}");
  add_registry_options(*command, args->flags);
  command->callback([args, &action] {
    action = [args] { return commands::run_tag(args->reference, args->tags, args->format, args->flags); };
  });
}

}  // namespace hwimg::cli
