#include <memory>

#include "choice_option.hpp"
#include "commands.hpp"
#include "judge_options.hpp"

namespace hwimg::cli {
namespace {

struct SelectFlags {
  JudgeFlags judge;
  std::string format = "ref";
};

commands::SelectFormat format_of(const std::string& format) {
  return format == "json"          ? commands::SelectFormat::json
         : format == "docker-args" ? commands::SelectFormat::docker_args
         : format == "podman-args" ? commands::SelectFormat::podman_args
                                   : commands::SelectFormat::reference;
}

}  // namespace

void define_select_command(CLI::App& subcommand, Action& action) {
  auto flags = std::make_shared<SelectFlags>();
  auto* command = &subcommand;
  add_judge_options(
      *command, flags->judge, "oci:DIR[:TAG] or a registry reference",
      [&] {
        add_choice_option(*command, "--format", flags->format, {"ref", "json", "docker-args", "podman-args"},
                          "ref (one line), json, or docker-args / podman-args: the GPU options and the reference "
                          "on one line, for docker run $(hwimg select --format docker-args REF)");
      },
      "Print every variant to stderr: chosen, compatible with its rank, or rejected with every reason");
  command->footer(
      "docker-args / podman-args: a variant that bundles its driver gets the device nodes of the GPUs considered\n"
      "(--device /dev/nvidiactl --device /dev/nvidia-uvm --device /dev/nvidia-uvm-tools --device /dev/nvidiaN),\n"
      "other GPU variants NVIDIA's toolkit (--gpus for docker, --device nvidia.com/gpu=... for podman), CPU variants\n"
      "nothing (docs/running.md).\n"
      "Exit status 3 when no variant fits; every variant's reasons then go to stderr.");
  command->callback([flags, &action] {
    commands::SelectArguments arguments{judge_arguments(flags->judge), format_of(flags->format)};
    action = [arguments] { return commands::run_select(arguments); };
  });
}

}  // namespace hwimg::cli
