#include <memory>

#include "commands.hpp"
#include "format_option.hpp"
#include "hwimg/commands/registry_tools.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_digest_command(CLI::App& subcommand, Action& action) {
  struct Arguments {
    commands::DigestArguments digest;
    std::string facts_file;
  };
  auto args = std::make_shared<Arguments>();
  auto* command = &subcommand;
  command->add_option("REFERENCE", args->digest.reference, "REGISTRY/REPO[:TAG|@DIGEST] or oci:DIR[:TAG]")
      ->required();
  auto* facts = command->add_option("--for", args->facts_file,
                                    "print the digest of the variant hwimg select picks for the host this facts "
                                    "file describes (hwimg probe --format json), as select --host does")
                    ->check(CLI::ExistingFile);
  add_data_format_option(*command, args->digest.format, "the digest",
                         "{\"reference\", \"digest\", \"mediaType\", \"size\"}, with \"variant\" for --for");
  add_registry_options(*command, args->digest.registry);
  command->footer("The digest of the manifest or index REFERENCE names, verified against the bytes served "
                  "(the digest docker pull, skopeo and crane print). Exit status: 0 printed, 1 failure, 2 usage "
                  "mistake, 3 --for found no variant that runs on that host (every variant's reasons on stderr).");
  command->callback([args, facts, &action] {
    if (facts->count() > 0) args->digest.facts_file = args->facts_file;
    action = [args] { return commands::run_digest(args->digest); };
  });
}

}  // namespace hwimg::cli
