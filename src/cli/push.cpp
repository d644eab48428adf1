#include <memory>

#include "commands.hpp"
#include "hwimg/commands/registry_commands.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_push_command(CLI::App& subcommand, Action& action) {
  struct Arguments {
    std::string source;
    std::string destination;
    commands::RegistryFlags flags;
    bool no_compat = false;
  };
  auto args = std::make_shared<Arguments>();
  auto& options = args->flags.options;
  auto* command = &subcommand;
  command->add_option("SOURCE", args->source, "oci:DIR[:TAG]")->required();
  command->add_option("DESTINATION", args->destination, "REGISTRY/REPO[:TAG]")->required();
  command->add_option("-j,--jobs", options.jobs, "parallel blob uploads")->check(CLI::Range(1, 64));
  command->add_option("--chunk-size", options.chunk_size,
                      "blobs larger than this many bytes are uploaded in PATCH chunks of this size")
      ->check(CLI::Range(std::uint64_t{1} << 10, std::uint64_t{1} << 40));
  command->add_flag("--no-compat", args->no_compat,
                    "attach no NFD image-compatibility artifact to the variants (default: one per variant)");
  add_registry_options(*command, args->flags);
  command->callback([args, &action] {
    action = [args] { return commands::run_push(args->source, args->destination, args->flags, !args->no_compat); };
  });
}

}  // namespace hwimg::cli
