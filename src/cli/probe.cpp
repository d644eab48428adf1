#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "hwimg/probe/probe.hpp"
#include "hwimg/probe/report.hpp"
#include "hwimg/probe/x86_cpuid.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::cli {
namespace {

struct ProbeFlags {
  std::string format = "json";
  std::string output;
  bool verbose = false;
  bool cpuid_dump = false;
};

Result<int> run_probe(const ProbeFlags& flags) {
  if (flags.cpuid_dump) {
    fmt::print("{}", probe::format_cpuid_dump(probe::read_cpuid()));
    return 0;
  }
  auto options = probe::ProbeOptions::from_environment();
  if (!options) {
    return std::unexpected(options.error());
  }
  if (flags.verbose) {
    options->log = [](std::string_view line) { fmt::print(stderr, "hwimg: probe: {}\n", line); };
  }
  const auto facts = probe::probe_host(*options);
  if (!facts) {
    return std::unexpected(facts.error());
  }
  const auto text = flags.format == "json"   ? probe::to_json(*facts)
                    : flags.format == "text" ? probe::to_text(*facts)
                                             : probe::to_nfd(*facts);
  if (flags.output.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  if (auto written = util::write_file_atomic(flags.output, text); !written) {
    return std::unexpected(written.error());
  }
  return 0;
}

}  // namespace

void add_probe_command(CLI::App& app, Action& action) {
  auto flags = std::make_shared<ProbeFlags>();
  auto* command = app.add_subcommand("probe", "Print what this host can run: CPU level and features, NVIDIA driver, "
                                              "CUDA driver version and each GPU's compute capability");
  command->add_option("--format", flags->format, "json (the host facts `hwimg select --host` reads), text, "
                                                 "or nfd (a Node Feature Discovery features.d file)")
      ->check(CLI::IsMember({"json", "text", "nfd"}))
      ->capture_default_str();
  command->add_option("-o,--output", flags->output, "Write to FILE atomically instead of standard output")
      ->option_text("FILE");
  command->add_flag("-v,--verbose", flags->verbose, "Show each probe step's outcome on standard error");
  command->add_flag("--cpuid-dump", flags->cpuid_dump,
                    "Print this CPU's raw CPUID/XGETBV values (for bug reports and test data)");
  command->footer(
      "Environment:\n"
      "  HWIMG_PROC_ROOT              read this directory instead of /proc\n"
      "  HWIMG_SYS_ROOT               read this directory instead of /sys\n"
      "  HWIMG_NVML_LIBRARY           dlopen this instead of libnvidia-ml.so.1\n"
      "  HWIMG_CUDA_LIBRARY           dlopen this instead of libcuda.so.1\n"
      "  HWIMG_OVERRIDE_CUDA          like conda's CONDA_OVERRIDE_CUDA: a version (\"12.4\") replaces the CUDA\n"
      "                               driver version; set and empty means no CUDA, nothing is probed\n"
      "  HWIMG_CUDA_PROBE_TIMEOUT_MS  how long NVML and the CUDA driver may take, each (default 5000)\n"
      "No NVIDIA driver gives \"nvidia\": null and exit status 0.");
  command->callback([flags, &action] { action = [flags] { return run_probe(*flags); }; });
}

}  // namespace hwimg::cli
