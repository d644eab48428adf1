#include <memory>

#include "commands.hpp"
#include "format_option.hpp"
#include "hwimg/commands/registry_commands.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_index_command(CLI::App& subcommand, Action& action) {
  struct Arguments {
    std::string destination;
    std::vector<std::string> sources;
    commands::DataFormat format = commands::DataFormat::text;
    commands::RegistryFlags registry;
  };
  auto args = std::make_shared<Arguments>();
  auto* index = &subcommand;
  index->require_subcommand(1);
  auto* create = index->add_subcommand(
      "create", "Assemble one multi-variant index from variant manifests already pushed (CI fan-out builds)");
  create->add_option("REFERENCE", args->destination, "REGISTRY/REPO:TAG the index is pushed to")->required();
  create->add_option("--from", args->sources,
                     "a variant manifest by tag or digest, in the same repository; repeat, in index order")
      ->required();
  add_data_format_option(*create, args->format, "REGISTRY/REPO:TAG@DIGEST",
                         "{\"reference\", \"digest\", \"variants\"}");
  add_registry_options(*create, args->registry);
  create->callback([args, &action] {
    action = [args] { return commands::run_index_create(args->destination, args->sources, args->format, args->registry); };
  });
}

}  // namespace hwimg::cli
