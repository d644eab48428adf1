#include <memory>

#include "commands.hpp"
#include "hwimg/commands/select.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {
namespace {

struct SelectFlags {
  commands::SelectArguments arguments;
  std::string host_file;
  std::string gpus;
  std::string format = "ref";
  bool explain = false;
};

}  // namespace

void define_select_command(CLI::App& subcommand, Action& action) {
  auto flags = std::make_shared<SelectFlags>();
  auto* command = &subcommand;
  command->add_option("reference", flags->arguments.reference, "oci:DIR[:TAG] or a registry reference")->required();
  auto* host = command->add_option("--host", flags->host_file, "Judge against this facts file (hwimg probe --format "
                                                                "json) instead of probing this host")
                   ->check(CLI::ExistingFile);
  auto* gpus = command->add_option("--gpus", flags->gpus, "The GPUs the container will get: all, none, or indexes "
                                                          "/ UUIDs such as 0,1 (default: NVIDIA_VISIBLE_DEVICES, "
                                                          "else all)");
  command->add_option("--format", flags->format, "ref (one line) or json")
      ->check(CLI::IsMember({"ref", "json"}))
      ->capture_default_str();
  command->add_flag("--explain", flags->explain, "Print every variant to stderr: chosen, compatible with its rank, "
                                                 "or rejected with every reason");
  add_registry_options(*command, flags->arguments.registry);
  command->footer("Exit status 3 when no variant fits; every variant's reasons then go to stderr.");
  command->callback([flags, host, gpus, &action] {
    auto arguments = flags->arguments;
    if (host->count() > 0) arguments.host_file = flags->host_file;
    if (gpus->count() > 0) arguments.gpus = flags->gpus;
    arguments.format = flags->format == "json" ? commands::SelectFormat::json : commands::SelectFormat::reference;
    arguments.explain = flags->explain ? commands::Explain::yes : commands::Explain::no;
    action = [arguments] { return commands::run_select(arguments); };
  });
}

}  // namespace hwimg::cli
