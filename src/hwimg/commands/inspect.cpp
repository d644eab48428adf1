#include "hwimg/commands/inspect.hpp"

#include <fmt/format.h>

#include "hwimg/commands/usage.hpp"
#include "hwimg/commands/verify_sources.hpp"
#include "hwimg/image/open_image.hpp"
#include "hwimg/inspect/verification_view.hpp"

namespace hwimg::commands {

Result<int> run_inspect(const InspectArguments& arguments) {
  HWIMG_TRY(as_usage_error(image::parse_command_line_reference(arguments.reference)));
  TerminalOutput output(arguments.verify_code ? Progress::shown : Progress::hidden, arguments.registry.verbose);
  const auto context = fmt::format("failed to inspect {}", arguments.reference);
  HWIMG_TRY_ASSIGN(auto image, with_context(image::open_image(arguments.reference,
                                                              {client_options(arguments.registry, output), {}}),
                                            context));
  const auto& reference = image.reference;
  auto name = reference.kind == image::SourceKind::registry ? reference.registry.str() : reference.text;
  HWIMG_TRY_ASSIGN(const auto view, with_context(inspect::load_image_view(std::move(name), reference.digest ? "" : reference.tag,
                                                                          *image.reader, image.root),
                                                 context));
  if (!arguments.verify_code) {
    fmt::print("{}", inspect::render(view, arguments.format));
    return 0;
  }
  const VerifySources sources(*image.reader, output);
  HWIMG_TRY_ASSIGN(const auto verification,
                   with_context(verify::verify_image(*image.reader, image.root, sources.options()), context));
  output.clear_status();
  fmt::print("{}", inspect::render(view, arguments.format, &verification));
  return inspect::all_covered(verification) ? 0 : 3;
}

}  // namespace hwimg::commands
