#include "hwimg/commands/check.hpp"

#include <fmt/format.h>

#include "hwimg/select/report.hpp"

namespace hwimg::commands {

Result<int> run_check(const CheckArguments& arguments) {
  TerminalOutput output(Progress::hidden, arguments.judge.registry.verbose);
  HWIMG_TRY_ASSIGN(const auto judged, judge_image(arguments.judge, output));
  if (arguments.format == CheckFormat::json) {
    fmt::print("{}", select::render_json(judged.source, judged.selection));
  } else {
    fmt::print("{}", select::render_check(judged.source, judged.selection));
  }
  return finish_judging(arguments.judge, judged,
                        fmt::format("{} does not run on this host", arguments.judge.reference));
}

}  // namespace hwimg::commands
