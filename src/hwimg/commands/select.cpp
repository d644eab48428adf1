#include "hwimg/commands/select.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "hwimg/commands/environment.hpp"
#include "hwimg/probe/probe.hpp"
#include "hwimg/select/report.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::commands {
namespace {

Result<probe::HostFacts> host_facts(const SelectArguments& arguments) {
  if (arguments.host_file) {
    HWIMG_TRY_ASSIGN(const auto text, util::read_file(*arguments.host_file));
    return probe::parse_host_facts(text, arguments.host_file->string());
  }
  HWIMG_TRY_ASSIGN(const auto options, probe_options());
  return probe::probe_host(options);
}

}  // namespace

Result<int> run_select(const SelectArguments& arguments) {
  TerminalOutput output(Progress::hidden, arguments.registry.verbose);
  HWIMG_TRY_ASSIGN(const auto gpus, select::choose_gpu_selection(arguments.gpus, variable("NVIDIA_VISIBLE_DEVICES")));
  HWIMG_TRY_ASSIGN(const auto facts, host_facts(arguments));
  HWIMG_TRY_ASSIGN(const auto source,
                   select::load_image_source(arguments.reference, {client_options(arguments.registry, output), {}}));
  HWIMG_TRY_ASSIGN(const auto selection, select::select_variant(source.candidates, facts, gpus));

  if (arguments.format == SelectFormat::json) {
    fmt::print("{}", select::render_json(source, selection));
  } else if (selection.chosen) {
    fmt::print("{}\n", select::chosen_reference(source, selection));
  }
  std::fflush(stdout);
  if (!selection.chosen) {
    fmt::print(stderr, "hwimg: no variant of {} runs on this host\n{}", arguments.reference,
               select::render_explanation(source, selection));
    return static_cast<int>(ExitCode::no_match);
  }
  if (arguments.explain == Explain::yes) {
    fmt::print(stderr, "{}", select::render_explanation(source, selection));
  }
  return 0;
}

}  // namespace hwimg::commands
