#include <exception>
#include <iostream>

#include <fmt/format.h>

#include "commands.hpp"

int main(int argc, char** argv) {
  using namespace hwimg;
  CLI::App app{"hwimg: build hardware-specific OCI images and select the one that runs here", "hwimg"};
  app.set_version_flag("--version", std::string("hwimg ") + HWIMG_VERSION);
  app.require_subcommand(1);

  cli::Action action;
  cli::add_build_command(app, action);
  cli::add_inspect_command(app, action);
  cli::add_probe_command(app, action);
  cli::add_matrix_command(app, action);
  cli::add_push_command(app, action);
  cli::add_tag_command(app, action);
  cli::add_login_command(app, action);
  cli::add_select_command(app, action);
  cli::add_index_command(app, action);
  cli::add_serve_command(app, action);
  cli::add_completion_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : static_cast<int>(ExitCode::usage);
  }

  try {
    const auto result = action();
    if (!result) {
      fmt::print(stderr, "hwimg: error: {}\n", result.error().message);
      return static_cast<int>(result.error().exit_code);
    }
    return *result;
  } catch (const std::exception& e) {
    fmt::print(stderr, "hwimg: error: {}\n", e.what());
    return static_cast<int>(ExitCode::failure);
  }
}
