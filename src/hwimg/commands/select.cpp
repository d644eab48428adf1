#include "hwimg/commands/select.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "hwimg/commands/environment.hpp"
#include "hwimg/commands/usage.hpp"
#include "hwimg/image/open_image.hpp"
#include "hwimg/select/report.hpp"
#include "hwimg/select/run_arguments.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::commands {

Result<JudgedImage> judge_image(const JudgeArguments& arguments, util::Output& output) {
  HWIMG_TRY(as_usage_error(image::parse_command_line_reference(arguments.reference)));
  JudgedImage judged;
  HWIMG_TRY_ASSIGN(judged.gpus, select::choose_gpu_selection(arguments.gpus, variable("NVIDIA_VISIBLE_DEVICES")));
  HWIMG_TRY_ASSIGN(const auto facts, host_facts(arguments.host_file));
  judged.host = arguments.host_file ? fmt::format("the host in {}", arguments.host_file->string()) : "this host";
  HWIMG_TRY_ASSIGN(judged.source,
                   select::load_image_source(arguments.reference, {client_options(arguments.registry, output), {}}));
  HWIMG_TRY_ASSIGN(judged.selection, select::select_variant(judged.source.candidates, facts, judged.gpus));
  return judged;
}

int finish_judging(const JudgeArguments& arguments, const JudgedImage& judged, std::string_view refusal) {
  std::fflush(stdout);
  if (!judged.selection.chosen) {
    fmt::print(stderr, "hwimg: {}\n{}", refusal, select::render_explanation(judged.source, judged.selection));
    return static_cast<int>(ExitCode::no_match);
  }
  if (arguments.explain == Explain::yes) {
    fmt::print(stderr, "{}", select::render_explanation(judged.source, judged.selection));
  }
  return 0;
}

Result<int> run_select(const SelectArguments& arguments) {
  TerminalOutput output(Progress::hidden, arguments.judge.registry.verbose);
  HWIMG_TRY_ASSIGN(const auto judged, judge_image(arguments.judge, output));
  if (arguments.format == SelectFormat::json) {
    fmt::print("{}", select::render_json(judged.source, judged.selection));
  } else if (judged.selection.chosen && (arguments.format == SelectFormat::docker_args ||
                                         arguments.format == SelectFormat::podman_args)) {
    const auto runtime =
        arguments.format == SelectFormat::docker_args ? select::Runtime::docker : select::Runtime::podman;
    HWIMG_TRY_ASSIGN(const auto words,
                     select::run_arguments(judged.selection, judged.gpus,
                                           select::chosen_reference(judged.source, judged.selection), runtime));
    fmt::print("{}\n", util::join(words, " "));
  } else if (judged.selection.chosen) {
    fmt::print("{}\n", select::chosen_reference(judged.source, judged.selection));
  }
  return finish_judging(arguments.judge, judged,
                        fmt::format("no variant of {} runs on {}", arguments.judge.reference, judged.host));
}

}  // namespace hwimg::commands
