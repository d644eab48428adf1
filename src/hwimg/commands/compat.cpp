#include "hwimg/commands/compat.hpp"

#include <fmt/format.h>

#include "hwimg/compat/show.hpp"
#include "hwimg/registry/reference.hpp"

namespace hwimg::commands {

Result<int> run_compat_show(const CompatShowArguments& arguments) {
  auto reference = registry::parse_reference(arguments.reference);
  if (!reference) return std::unexpected(Error{reference.error().message, ExitCode::usage});
  if (arguments.reference.starts_with("oci:")) {
    return fail_usage("failed to show the NFD artifacts of {}: name a registry image; a layout has no referrers",
                      arguments.reference);
  }
  TerminalOutput output(Progress::hidden, arguments.registry.verbose);
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(client_options(arguments.registry, output)));
  HWIMG_TRY_ASSIGN(const auto found, compat::find_artifacts(client, *reference, arguments.variant));
  fmt::print("{}", arguments.json ? compat::artifacts_json(found) : compat::artifacts_yaml(found));
  return 0;
}

}  // namespace hwimg::commands
