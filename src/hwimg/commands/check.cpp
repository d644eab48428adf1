#include "hwimg/commands/check.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "hwimg/select/report.hpp"

namespace hwimg::commands {

Result<int> run_check(const CheckArguments& arguments) {
  TerminalOutput output(Progress::hidden, arguments.registry.verbose);
  HWIMG_TRY_ASSIGN(const auto judged, judge_image(arguments.reference, arguments.host_file, arguments.gpus,
                                                  arguments.registry, output));
  const auto& [source, selection] = judged;

  if (arguments.format == CheckFormat::json) {
    fmt::print("{}", select::render_json(source, selection));
  } else {
    fmt::print("{}", select::render_check(source, selection));
  }
  std::fflush(stdout);
  if (!selection.chosen) {
    fmt::print(stderr, "hwimg: {} does not run on this host\n{}", arguments.reference,
               select::render_explanation(source, selection));
    return static_cast<int>(ExitCode::no_match);
  }
  if (arguments.explain == Explain::yes) {
    fmt::print(stderr, "{}", select::render_explanation(source, selection));
  }
  return 0;
}

}  // namespace hwimg::commands
