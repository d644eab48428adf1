#include "hwimg/commands/inspect.hpp"

#include <fmt/format.h>

#include "hwimg/commands/usage.hpp"
#include "hwimg/image/open_image.hpp"

namespace hwimg::commands {
namespace {

Result<inspect::ImageView> view(const InspectArguments& arguments, util::Output& output) {
  HWIMG_TRY_ASSIGN(auto image, image::open_image(arguments.reference, {client_options(arguments.registry, output), {}}));
  const auto& reference = image.reference;
  auto name = reference.kind == image::SourceKind::registry ? reference.registry.str() : reference.text;
  return inspect::load_image_view(std::move(name), *image.reader, image.root);
}

}  // namespace

Result<int> run_inspect(const InspectArguments& arguments) {
  HWIMG_TRY(as_usage_error(image::parse_image_reference(arguments.reference)));
  TerminalOutput output(Progress::hidden, arguments.registry.verbose);
  HWIMG_TRY_ASSIGN(const auto image_view,
                   with_context(view(arguments, output), fmt::format("failed to inspect {}", arguments.reference)));
  fmt::print("{}", inspect::render(image_view, arguments.format));
  return 0;
}

}  // namespace hwimg::commands
