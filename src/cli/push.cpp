#include <memory>

#include "commands.hpp"
#include "format_option.hpp"
#include "hwimg/commands/registry_commands.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_push_command(CLI::App& subcommand, Action& action) {
  auto args = std::make_shared<commands::PushArguments>();
  auto no_compat = std::make_shared<bool>(false);
  auto& options = args->registry.options;
  auto* command = &subcommand;
  command->add_option("SOURCE", args->source, "oci:DIR[:TAG]")->required();
  command->add_option("DESTINATION", args->destination, "REGISTRY/REPO[:TAG]")->required();
  command->add_option("-j,--jobs", options.jobs, "parallel blob uploads")->check(CLI::Range(1, 64));
  command->add_option("--chunk-size", options.chunk_size,
                      "blobs larger than this many bytes are uploaded in PATCH chunks of this size")
      ->check(CLI::Range(std::uint64_t{1} << 10, std::uint64_t{1} << 40));
  command->add_flag("--no-compat", *no_compat,
                    "attach no NFD image-compatibility artifact to the variants (default: one per variant)");
  add_data_format_option(*command, args->format, "one summary line",
                         "{\"reference\", \"digest\", \"blobs\", \"manifests\", \"tags\", ...}");
  add_registry_options(*command, args->registry);
  command->callback([args, no_compat, &action] {
    args->compat = *no_compat ? compat::CompatArtifacts::skip : compat::CompatArtifacts::attach;
    action = [args] { return commands::run_push(*args); };
  });
}

}  // namespace hwimg::cli
