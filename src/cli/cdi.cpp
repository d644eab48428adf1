#include <memory>

#include "commands.hpp"
#include "hwimg/commands/cdi.hpp"

namespace hwimg::cli {
namespace {

struct CdiGenerateFlags {
  std::string host_file;
  std::string output;
  CLI::Option* host_option = nullptr;
  CLI::Option* output_option = nullptr;
};

}  // namespace

void define_cdi_command(CLI::App& subcommand, Action& action) {
  auto flags = std::make_shared<CdiGenerateFlags>();
  auto* cdi = &subcommand;
  cdi->require_subcommand(1);
  auto* generate = cdi->add_subcommand(
      "generate", "Print a CDI spec (kind hwimg.org/gpu) that gives a container this host's GPUs as device nodes "
                  "only, for variants that bundle their driver: podman run --device hwimg.org/gpu=all");
  flags->host_option = generate->add_option("--host", flags->host_file,
                                            "The GPUs of this facts file (hwimg probe --format json) instead of "
                                            "probing this host")
                           ->check(CLI::ExistingFile);
  flags->output_option = generate->add_option("-o,--output", flags->output,
                                              "Write to FILE atomically instead of standard output (runtimes "
                                              "read /etc/cdi and /var/run/cdi: /etc/cdi/hwimg.yaml)")
                             ->option_text("FILE");
  generate->footer(
      "Devices: hwimg.org/gpu=0, =1, ... by index, =GPU-<uuid> by UUID, and =all; the control nodes nvidiactl,\n"
      "nvidia-uvm and nvidia-uvm-tools come with each. Device nodes only: no mounts, no hooks (docs/running.md#cdi).\n"
      "Environment:\n"
      "  HWIMG_DEV_ROOT  for tests: the nodes' hostPath is under this directory (DIR/dev/nvidia0) instead of /dev");
  generate->callback([flags, &action] {
    commands::CdiGenerateArguments arguments;
    if (flags->host_option->count() > 0) arguments.host_file = flags->host_file;
    if (flags->output_option->count() > 0) arguments.output = flags->output;
    action = [arguments] { return commands::run_cdi_generate(arguments); };
  });
}

}  // namespace hwimg::cli
