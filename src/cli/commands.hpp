#pragma once
// Each subcommand file adds its flags to the app and, when chosen, sets the action main runs.

#include <functional>

#include <CLI/CLI.hpp>

#include "hwimg/util/error.hpp"

namespace hwimg::cli {

using Action = std::function<Result<int>()>;

void add_build_command(CLI::App& app, Action& action);
void add_inspect_command(CLI::App& app, Action& action);
void add_probe_command(CLI::App& app, Action& action);
void add_matrix_command(CLI::App& app, Action& action);
void add_push_command(CLI::App& app, Action& action);
void add_tag_command(CLI::App& app, Action& action);
void add_login_command(CLI::App& app, Action& action);
void add_select_command(CLI::App& app, Action& action);
void add_index_command(CLI::App& app, Action& action);
void add_serve_command(CLI::App& app, Action& action);
void add_completion_command(CLI::App& app, Action& action);

}  // namespace hwimg::cli
