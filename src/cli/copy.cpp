#include <memory>

#include "commands.hpp"
#include "format_option.hpp"
#include "hwimg/commands/copy.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_copy_command(CLI::App& subcommand, Action& action) {
  auto args = std::make_shared<commands::CopyArguments>();
  auto& copy = *args;
  auto* command = &subcommand;
  command->footer(
      "Kept variant manifests are copied byte for byte (same digests); an index that loses variants is rewritten "
      "and gets a new digest. Between repositories of one registry blobs are mounted; from another registry they "
      "are streamed through, never stored here. Each variant is also tagged TAG-<variant>. The kept manifests' "
      "referrers (NFD compatibility artifacts, signatures, SBOMs) come along: on a registry listed through the "
      "referrers API or the sha256-<digest> tag, in a layout as untagged entries of index.json.\n"
      "Exit status: 0 copied, 1 failed, 2 usage mistake (an unknown --variant names the nearest).");
  command->add_option("SOURCE", copy.source, "oci:DIR[:TAG] or REGISTRY/REPO[:TAG|@DIGEST]")->required();
  command->add_option("DESTINATION", copy.destination,
                      "oci:DIR[:TAG] or REGISTRY/REPO[:TAG] (the tag defaults to the source's, else latest)")
      ->required();
  command->add_option("--variant", copy.variants, "keep this variant (an org.hwimg.variant id); repeatable");
  command->add_option("--for", copy.hosts,
                      "keep every variant that runs on the host these facts describe (`hwimg probe --format json`); "
                      "repeatable")
      ->check(CLI::ExistingFile);
  add_data_format_option(*command, copy.format, "one summary line",
                         "{\"source\", \"destination\", \"digest\", \"variants\", \"blobs\", ...}");
  command->add_option("-j,--jobs", copy.registry.options.jobs, "parallel blob transfers")->check(CLI::Range(1, 64));
  add_registry_options(*command, copy.registry);
  command->callback([args, &action] {
    action = [args] { return commands::run_copy(*args); };
  });
}

}  // namespace hwimg::cli
