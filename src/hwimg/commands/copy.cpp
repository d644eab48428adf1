#include "hwimg/commands/copy.hpp"

#include <fmt/format.h>

#include "hwimg/commands/environment.hpp"
#include "hwimg/commands/usage.hpp"
#include "hwimg/copy/copy_image.hpp"
#include "hwimg/copy/report.hpp"
#include "hwimg/image/open_image.hpp"

namespace hwimg::commands {

Result<int> run_copy(const CopyArguments& arguments) {
  for (const auto* text : {&arguments.source, &arguments.destination}) {
    HWIMG_TRY(as_usage_error(image::parse_command_line_reference(*text)));
  }
  TerminalOutput output(arguments.format == DataFormat::text ? Progress::shown : Progress::hidden,
                        arguments.registry.verbose);
  copy::CopyRequest request{arguments.source, arguments.destination, {arguments.variants, {}},
                            client_options(arguments.registry, output)};
  for (const auto& file : arguments.hosts) {
    HWIMG_TRY_ASSIGN(auto facts, host_facts(file));
    request.filter.hosts.push_back({file.string(), std::move(facts)});
  }
  HWIMG_TRY_ASSIGN(const auto summary, copy::copy_image(request));
  output.clear_status();
  if (arguments.format == DataFormat::json) {
    fmt::print("{}", copy::render_json(request, summary));
  } else {
    fmt::print("{}\n", copy::summary_line(request, summary));
  }
  return 0;
}

}  // namespace hwimg::commands
