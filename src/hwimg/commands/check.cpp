#include "hwimg/commands/check.hpp"

#include <fmt/format.h>

#include "hwimg/commands/verify_sources.hpp"
#include "hwimg/select/report.hpp"

namespace hwimg::commands {
namespace {

// The chosen variant's programs against this host's CPU: 0, or 3 with the code the CPU lacks.
Result<int> verify_chosen(const CheckArguments& arguments, const JudgedImage& judged, util::Output& output) {
  const auto& selection = judged.selection;
  const auto& host = selection.host;
  const auto position = *selection.chosen;
  const auto& name = selection.verdicts[position].requirements.name;
  const verify::CpuLabel label{host.arch, fmt::format("the CPU of {} ({})", judged.host, host.cpu_name), host.features,
                               host.x86_level.value_or(hw::X86Level::v1)};
  auto& reader = *judged.source.image.reader;
  const VerifySources sources(reader, output);
  HWIMG_TRY_ASSIGN(const auto verified,
                   with_context(verify::verify_manifest(reader, judged.source.candidates[position].descriptor, name,
                                                        label, sources.options()),
                                fmt::format("failed to verify the code of {}", arguments.judge.reference)));
  std::fflush(stdout);
  if (verified.covered()) {
    fmt::print(stderr, "hwimg: the code of variant {} ({} programs) needs nothing {} lacks\n", name,
               verified.findings.programs, label.name);
    return 0;
  }
  fmt::print(stderr, "hwimg: {} does not run on {}: the code of variant {} needs what {} lacks: {}\n",
             arguments.judge.reference, judged.host, name, label.name, verify::first_lines(verified.findings.uncovered));
  return static_cast<int>(ExitCode::no_match);
}

}  // namespace

Result<int> run_check(const CheckArguments& arguments) {
  TerminalOutput output(Progress::hidden, arguments.judge.registry.verbose);
  HWIMG_TRY_ASSIGN(const auto judged, judge_image(arguments.judge, output));
  if (arguments.format == CheckFormat::json) {
    fmt::print("{}", select::render_json(judged.source, judged.selection));
  } else {
    fmt::print("{}", select::render_check(judged.source, judged.selection, judged.host));
  }
  const auto status = finish_judging(arguments.judge, judged,
                                     fmt::format("{} does not run on {}", arguments.judge.reference, judged.host));
  if (status != 0 || arguments.code == CodeCheck::labels_only) return status;
  return verify_chosen(arguments, judged, output);
}

}  // namespace hwimg::commands
