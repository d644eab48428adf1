#include <memory>

#include "commands.hpp"
#include "hwimg/commands/check.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {
namespace {

struct CheckFlags {
  commands::CheckArguments arguments;
  std::string host_file;
  std::string gpus;
  std::string format = "text";
  bool explain = false;
};

}  // namespace

void define_check_command(CLI::App& subcommand, Action& action) {
  auto flags = std::make_shared<CheckFlags>();
  auto* command = &subcommand;
  command->add_option("reference", flags->arguments.reference,
                      "oci:DIR[:TAG] or a registry reference: one image manifest, or an index")
      ->required();
  auto* host = command->add_option("--host", flags->host_file, "Judge against this facts file (hwimg probe --format "
                                                                "json) instead of probing this host")
                   ->check(CLI::ExistingFile);
  auto* gpus = command->add_option("--gpus", flags->gpus, "The GPUs the container will get: all, none, or indexes "
                                                          "/ UUIDs such as 0,1 (default: NVIDIA_VISIBLE_DEVICES, "
                                                          "else all)");
  command->add_option("--format", flags->format, "text (one line) or json (as hwimg select --format json)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command->add_flag("--explain", flags->explain, "Also print the host and every variant's verdict to stderr");
  add_registry_options(*command, flags->arguments.registry);
  command->footer(
      "A manifest is judged by its own org.hwimg.* annotations or labels (else its platform and\n"
      "NVIDIA_REQUIRE_*), by the rules of hwimg select; an index runs here when select finds a variant.\n"
      "NVIDIA's container toolkit in CDI mode (its default) no longer checks NVIDIA_REQUIRE_CUDA: run\n"
      "this as an init container or a Slurm prolog to refuse an image that would fail on this node.\n"
      "Exit status 0 when it runs here, 3 when it does not (every reason then goes to stderr).");
  command->callback([flags, host, gpus, &action] {
    auto arguments = flags->arguments;
    if (host->count() > 0) arguments.host_file = flags->host_file;
    if (gpus->count() > 0) arguments.gpus = flags->gpus;
    arguments.format = flags->format == "json" ? commands::CheckFormat::json : commands::CheckFormat::text;
    arguments.explain = flags->explain ? commands::Explain::yes : commands::Explain::no;
    action = [arguments] { return commands::run_check(arguments); };
  });
}

}  // namespace hwimg::cli
