#include "hwimg/commands/compat.hpp"

#include <fmt/format.h>

#include "hwimg/compat/show.hpp"
#include "hwimg/image/open_image.hpp"

namespace hwimg::commands {

Result<int> run_compat_show(const CompatShowArguments& arguments) {
  auto reference = image::parse_command_line_reference(arguments.reference);
  if (!reference) return std::unexpected(Error{reference.error().message, ExitCode::usage});
  TerminalOutput output(Progress::hidden, arguments.registry.verbose);
  HWIMG_TRY_ASSIGN(auto image, image::open_image(std::move(*reference), {client_options(arguments.registry, output), {}, nullptr}));
  HWIMG_TRY_ASSIGN(const auto found,
                   compat::find_artifacts(*image.reader, image.root, arguments.reference, arguments.variant));
  fmt::print("{}", arguments.json ? compat::artifacts_json(found) : compat::artifacts_yaml(found));
  return 0;
}

}  // namespace hwimg::commands
