#include <memory>

#include "choice_option.hpp"
#include "commands.hpp"
#include "hwimg/commands/check.hpp"
#include "judge_options.hpp"

namespace hwimg::cli {
namespace {

struct CheckFlags {
  JudgeFlags judge;
  std::string format = "text";
  bool verify = false;
};

}  // namespace

void define_check_command(CLI::App& subcommand, Action& action) {
  auto flags = std::make_shared<CheckFlags>();
  auto* command = &subcommand;
  add_judge_options(
      *command, flags->judge, "oci:DIR[:TAG] or a registry reference: one image manifest, or an index",
      [&] {
        add_choice_option(*command, "--format", flags->format, {"text", "json"},
                          "text (one line) or json (as hwimg select --format json)");
        command->add_flag("--verify", flags->verify,
                          "Also scan the programs of the variant that would run and hold what their instructions "
                          "need against this host's CPU");
      },
      "Also print the host and every variant's verdict to stderr");
  command->footer(
      "A manifest is judged by its own org.hwimg.* annotations or labels (else its platform and\n"
      "NVIDIA_REQUIRE_*), by the rules of hwimg select; an index runs here when select finds a variant.\n"
      "NVIDIA's container toolkit in CDI mode (its default) no longer checks NVIDIA_REQUIRE_CUDA: run\n"
      "this as an init container or a Slurm prolog to refuse an image that would fail on this node.\n"
      "With --verify, the variant's code must also need nothing this host's CPU lacks.\n"
      "Exit status 0 when it runs here, 3 when it does not (every reason then goes to stderr).");
  command->callback([flags, &action] {
    commands::CheckArguments arguments{judge_arguments(flags->judge),
                                       flags->format == "json" ? commands::CheckFormat::json
                                                               : commands::CheckFormat::text,
                                       flags->verify ? commands::CodeCheck::verify : commands::CodeCheck::labels_only};
    action = [arguments] { return commands::run_check(arguments); };
  });
}

}  // namespace hwimg::cli
