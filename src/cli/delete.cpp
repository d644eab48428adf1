#include <memory>

#include "commands.hpp"
#include "format_option.hpp"
#include "hwimg/commands/registry_tools.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_delete_command(CLI::App& subcommand, Action& action) {
  struct Arguments {
    std::string reference;
    commands::DataFormat format = commands::DataFormat::text;
    commands::RegistryFlags flags;
  };
  auto args = std::make_shared<Arguments>();
  auto* command = &subcommand;
  command->add_option("REFERENCE", args->reference, "REGISTRY/REPO:TAG or REGISTRY/REPO@DIGEST")->required();
  add_data_format_option(*command, args->format, "deleted tag REF (it named DIGEST; ...) or deleted REF@DIGEST ...",
                         "{\"reference\", \"digest\", \"deleted\": \"tag\" or \"manifest\"}");
  add_registry_options(*command, args->flags);
  command->footer("REGISTRY/REPO:TAG deletes that tag only: the manifest it names stays, with its other tags. The "
                  "registry's own tag deletion is used where it has one (DELETE /v2/<name>/manifests/<tag>); where "
                  "it answers 400 or 405 (distribution 2.8), a small placeholder manifest is put at the tag and "
                  "deleted by digest, as regctl does. REGISTRY/REPO@DIGEST deletes the manifest, and every tag naming "
                  "it goes with it. Deleting an index does not delete its variants: their manifests (and tags "
                  "TAG-<variant>) stay until deleted one by one. Registries may refuse deletes (distribution needs "
                  "storage.delete.enabled). Exit status: 0 deleted, 1 failure (the registry's status and error code "
                  "in the message), 2 usage mistake.");
  command->callback([args, &action] {
    action = [args] { return commands::run_delete(args->reference, args->format, args->flags); };
  });
}

}  // namespace hwimg::cli
