#include <memory>

#include "choice_option.hpp"
#include "commands.hpp"
#include "hwimg/commands/probe.hpp"

namespace hwimg::cli {
namespace {

struct ProbeFlags {
  std::string format = "auto";
  std::string output;
  bool verbose = false;
  bool cpuid_dump = false;
};

commands::ProbeArguments arguments_of(const ProbeFlags& flags) {
  commands::ProbeArguments arguments;
  arguments.format = flags.format == "json"   ? commands::ProbeFormat::json
                     : flags.format == "text" ? commands::ProbeFormat::text
                     : flags.format == "nfd"  ? commands::ProbeFormat::nfd
                                              : commands::ProbeFormat::automatic;
  arguments.output = flags.output;
  arguments.verbose = flags.verbose ? commands::Verbose::yes : commands::Verbose::no;
  arguments.cpuid_dump = flags.cpuid_dump ? commands::CpuidDump::yes : commands::CpuidDump::no;
  return arguments;
}

}  // namespace

void define_probe_command(CLI::App& subcommand, Action& action) {
  auto flags = std::make_shared<ProbeFlags>();
  auto* command = &subcommand;
  add_choice_option(*command, "--format", flags->format, {"auto", "json", "text", "nfd"},
                    "auto (text on a terminal, json when piped or written with -o), json (the host facts "
                    "`hwimg select --host` reads), text, or nfd (a Node Feature Discovery features.d file)");
  command->add_option("-o,--output", flags->output, "Write to FILE atomically instead of standard output")
      ->option_text("FILE");
  command->add_flag("-v,--verbose", flags->verbose, "Show each probe step's outcome on standard error");
  command->add_flag("--cpuid-dump", flags->cpuid_dump,
                    "Print this CPU's raw CPUID/XGETBV values and the kernel's AT_HWCAP2 (for bug reports and test data)");
  command->footer(
      "Environment:\n"
      "  HWIMG_PROC_ROOT              read this directory instead of /proc\n"
      "  HWIMG_SYS_ROOT               read this directory instead of /sys\n"
      "  HWIMG_NVML_LIBRARY           dlopen this instead of libnvidia-ml.so.1\n"
      "  HWIMG_CUDA_LIBRARY           dlopen this instead of libcuda.so.1\n"
      "  HWIMG_OVERRIDE_CUDA          like conda's CONDA_OVERRIDE_CUDA: a version (\"12.4\") replaces the CUDA\n"
      "                               driver version; set and empty means no CUDA, nothing is probed\n"
      "  HWIMG_OVERRIDE_COMPUTE_CAPABILITY\n"
      "                               one GPU per compute capability (\"9.0\", \"8.0,9.0\") instead of the\n"
      "                               probed GPUs (which keep their names and UUIDs); empty: no GPU\n"
      "  HWIMG_OVERRIDE_CPU_LEVEL     a generic CPU of this level (\"x86-64-v2\", \"armv8.2a\"): the\n"
      "                               level's features only, no named microarchitecture\n"
      "  HWIMG_CPUID_FILE             decode these recorded CPUID values (hwimg probe --cpuid-dump) instead\n"
      "                               of this CPU's: probe a recorded Intel or AMD CPU on any machine\n"
      "  HWIMG_CUDA_PROBE_TIMEOUT_MS  how long NVML and the CUDA driver may take, each (default 5000)\n"
      "Overrides also apply where select, check and serve probe; --host FILE is read as written.\n"
      "No NVIDIA driver gives \"nvidia\": null and exit status 0.");
  command->callback([flags, &action] {
    action = [arguments = arguments_of(*flags)] { return commands::run_probe(arguments); };
  });
}

}  // namespace hwimg::cli
