#include "hwimg/commands/probe.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "hwimg/commands/environment.hpp"
#include "hwimg/probe/report.hpp"
#include "hwimg/probe/x86_cpuid.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::commands {

Result<int> run_probe(const ProbeArguments& arguments) {
  if (arguments.cpuid_dump == CpuidDump::yes) {
    fmt::print("{}", probe::format_cpuid_dump(probe::read_cpuid()));
    return 0;
  }
  TerminalOutput output(Progress::hidden, arguments.verbose);
  HWIMG_TRY_ASSIGN(auto options, probe_options());
  options.output = &output;
  HWIMG_TRY_ASSIGN(const auto facts, probe::probe_host(options));
  auto format = arguments.format;
  if (format == ProbeFormat::automatic) {
    format = arguments.output.empty() && ::isatty(STDOUT_FILENO) == 1 ? ProbeFormat::text : ProbeFormat::json;
  }
  const auto text = format == ProbeFormat::json   ? probe::to_json(facts)
                    : format == ProbeFormat::text ? probe::to_text(facts)
                                                  : probe::to_nfd(facts);
  if (arguments.output.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  HWIMG_TRY(util::write_file_atomic(arguments.output, text));
  return 0;
}

}  // namespace hwimg::commands
