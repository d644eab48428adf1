#include "hwimg/commands/cdi.hpp"

#include <fmt/format.h>

#include "hwimg/cdi/spec.hpp"
#include "hwimg/commands/environment.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::commands {

Result<int> run_cdi_generate(const CdiGenerateArguments& arguments) {
  HWIMG_TRY_ASSIGN(const auto facts, host_facts(arguments.host_file));
  cdi::SpecOptions options;
  if (const auto root = variable("HWIMG_DEV_ROOT"); root && !root->empty()) {
    // The spec's hostPath must not depend on the directory a runtime reads it from.
    std::error_code error;
    const auto absolute = std::filesystem::absolute(*root, error);
    if (error) {
      return fail("failed to resolve HWIMG_DEV_ROOT {}: {}", *root, error.message());
    }
    options.device_root = absolute.lexically_normal();
  }
  HWIMG_TRY_ASSIGN(const auto text, cdi::generate_spec(facts, options));
  if (!arguments.output) {
    fmt::print("{}", text);
    return 0;
  }
  // /etc/cdi does not exist until a first spec is put there.
  if (const auto parent = arguments.output->parent_path(); !parent.empty()) {
    HWIMG_TRY(util::make_directories(parent));
  }
  HWIMG_TRY(util::write_file_atomic(*arguments.output, text));
  return 0;
}

}  // namespace hwimg::commands
