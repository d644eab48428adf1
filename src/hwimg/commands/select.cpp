#include "hwimg/commands/select.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "hwimg/commands/environment.hpp"
#include "hwimg/select/report.hpp"

namespace hwimg::commands {

Result<JudgedImage> judge_image(const std::string& reference, const std::optional<std::filesystem::path>& host_file,
                                const std::optional<std::string>& gpus, const RegistryFlags& registry,
                                util::Output& output) {
  HWIMG_TRY_ASSIGN(const auto gpu_selection, select::choose_gpu_selection(gpus, variable("NVIDIA_VISIBLE_DEVICES")));
  HWIMG_TRY_ASSIGN(const auto facts, host_facts(host_file));
  JudgedImage judged;
  HWIMG_TRY_ASSIGN(judged.source, select::load_image_source(reference, {client_options(registry, output), {}}));
  HWIMG_TRY_ASSIGN(judged.selection, select::select_variant(judged.source.candidates, facts, gpu_selection));
  return judged;
}

Result<int> run_select(const SelectArguments& arguments) {
  TerminalOutput output(Progress::hidden, arguments.registry.verbose);
  HWIMG_TRY_ASSIGN(const auto judged, judge_image(arguments.reference, arguments.host_file, arguments.gpus,
                                                  arguments.registry, output));
  const auto& [source, selection] = judged;

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
