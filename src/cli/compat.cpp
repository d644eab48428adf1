#include <memory>

#include "choice_option.hpp"
#include "commands.hpp"
#include "hwimg/commands/compat.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_compat_command(CLI::App& subcommand, Action& action) {
  auto args = std::make_shared<commands::CompatShowArguments>();
  auto format = std::make_shared<std::string>("yaml");
  auto* compat = &subcommand;
  compat->require_subcommand(1);
  auto* show = compat->add_subcommand(
      "show", "Print the NFD image-compatibility spec attached to each variant of an image (found through "
              "the OCI referrers), as `nfd compat validate-node` reads it");
  show->add_option("REFERENCE", args->reference,
                   "REGISTRY/REPO[:TAG|@DIGEST] or oci:DIR[:TAG]: an index or one variant (a layout keeps the "
                   "artifacts `hwimg copy` brought into it)")
      ->required();
  show->add_option("--variant", args->variant, "only this variant id");
  add_choice_option(*show, "--format", *format, {"yaml", "json"}, "yaml (the stored spec, byte for byte) or json");
  add_registry_options(*show, args->registry);
  show->callback([args, format, &action] {
    args->json = *format == "json";
    action = [args] { return commands::run_compat_show(*args); };
  });
}

}  // namespace hwimg::cli
