#include <memory>

#include "choice_option.hpp"
#include "commands.hpp"
#include "hwimg/commands/inspect.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_inspect_command(CLI::App& subcommand, Action& action) {
  auto arguments = std::make_shared<commands::InspectArguments>();
  auto format = std::make_shared<std::string>("table");
  auto* cmd = &subcommand;
  cmd->add_option("reference", arguments->reference, "oci:DIR[:TAG] or REGISTRY/REPO[:TAG|@DIGEST]")->required();
  add_choice_option(*cmd, "--format", *format, {"table", "json"}, "table or json");
  cmd->add_flag("--verify", arguments->verify_code,
                "also scan every variant's programs and hold what their instructions need against the variant's CPU "
                "label (exit status 3 when a label does not cover its code)");
  add_registry_options(*cmd, arguments->registry);
  cmd->footer("Per variant: its tags (in a layout, the index.json tags naming its manifest; on a registry, the "
              "build's TAG-<variant id> when the first page of the tag list, one request, has it), annotations, "
              "config (entrypoint, cmd, workdir, user, created; HWIMG_*, NVIDIA_* and CUDA_VERSION in full, other "
              "environment variables by name; labels other than the variant's annotations), layers, and the referrers attached (signatures, SBOMs, NFD "
              "artifacts: digest and artifactType). Sizes are the layers as stored and pulled: compressed. --format "
              "json adds to each variant \"tags\", \"imageConfig\" {created, entrypoint, cmd, workingDir, user, "
              "env, labels}, \"layersSize\" (compressed bytes) and \"referrers\" [{mediaType, digest, size, "
              "artifactType, annotations}], and at the top the index's \"referrers\" and \"notes\" (tags or "
              "referrers that could not be listed, and why). A registry is asked for the index, each variant's "
              "manifest and config, one page of tags and the referrers; no layer unless --verify.");
  cmd->callback([&action, arguments, format] {
    arguments->format = *format == "json" ? inspect::Format::json : inspect::Format::table;
    action = [arguments] { return commands::run_inspect(*arguments); };
  });
}

}  // namespace hwimg::cli
