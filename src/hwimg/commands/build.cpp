#include "hwimg/commands/build.hpp"

#include <fmt/format.h>

#include "hwimg/commands/environment.hpp"
#include "hwimg/commands/registry_commands.hpp"

namespace hwimg::commands {

Result<int> run_build(BuildArguments arguments) {
  auto& request = arguments.request;
  TerminalOutput output(stdout_is_terminal() ? Progress::shown : Progress::hidden, arguments.registry.verbose);
  request.output = &output;
  HWIMG_TRY_ASSIGN(request.source_date_epoch, source_date_epoch());
  request.expand.cuda_root = cuda_root();
  request.registry = client_options(arguments.registry, output);
  request.cache = arguments.cache.empty() ? cache_root() : arguments.cache;
  if (!arguments.push.empty()) {
    auto destination = registry::parse_reference(arguments.push);
    if (!destination) return std::unexpected(Error{destination.error().message, ExitCode::usage});
    if (destination->tag.empty() || destination->digest) {
      return fail_usage("failed to build for {}: name the tag to push to, REGISTRY/REPO:TAG", arguments.push);
    }
    request.tag = destination->tag;
    request.push = std::move(*destination);
  } else if (request.layout.empty()) {
    return fail_usage("failed to build: name where the images go, -o DIR and/or --push REGISTRY/REPO:TAG");
  }
  HWIMG_TRY_ASSIGN(const auto report, build::build_recipe(request));
  for (const auto& variant : report.variants) {
    fmt::print("{:<32} {:<20} {}{}\n", variant.id, variant.manifest.platform->str(), variant.manifest.digest.str(),
               variant.reused ? " (unchanged)" : "");
  }
  if (!arguments.request.layout.empty()) {
    fmt::print("wrote oci:{}:{} ({} variant{}, index {})\n", request.layout.string(), request.tag,
               report.variants.size(), report.variants.size() == 1 ? "" : "s", report.index.digest.str());
  }
  if (report.pushed) fmt::print("{}\n", push_summary_line(*report.pushed));
  return 0;
}

}  // namespace hwimg::commands
