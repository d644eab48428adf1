#include "hwimg/commands/build.hpp"

#include <fmt/format.h>

#include "hwimg/commands/environment.hpp"

namespace hwimg::commands {

Result<int> run_build(BuildArguments arguments) {
  auto& request = arguments.request;
  TerminalOutput output(stdout_is_terminal() ? Progress::shown : Progress::hidden, arguments.registry.verbose);
  request.output = &output;
  request.source_date_epoch = variable("SOURCE_DATE_EPOCH");
  request.expand.cuda_root = cuda_root();
  request.registry = client_options(arguments.registry, output);
  request.cache = arguments.cache.empty() ? cache_root() : arguments.cache;
  HWIMG_TRY_ASSIGN(const auto report, build::build_recipe(request));
  for (const auto& variant : report.variants) {
    fmt::print("{:<32} {:<20} {}{}\n", variant.id, variant.manifest.platform->str(), variant.manifest.digest.str(),
               variant.reused ? " (unchanged)" : "");
  }
  fmt::print("wrote oci:{}:{} ({} variant{}, index {})\n", request.layout.string(), request.tag,
             report.variants.size(), report.variants.size() == 1 ? "" : "s", report.index.digest.str());
  return 0;
}

}  // namespace hwimg::commands
