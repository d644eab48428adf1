#pragma once
// Each subcommand file defines its flags on the subcommand main made for it and, when chosen, sets
// the action main runs. main defines only the subcommand the command line names (CLI11 builds each
// option at start, which was most of `hwimg`'s start-up), every one for `completion`.

#include <functional>

#include <CLI/CLI.hpp>

#include "hwimg/util/error.hpp"

namespace hwimg::cli {

using Action = std::function<Result<int>()>;

void define_build_command(CLI::App& subcommand, Action& action);
void define_inspect_command(CLI::App& subcommand, Action& action);
void define_probe_command(CLI::App& subcommand, Action& action);
void define_matrix_command(CLI::App& subcommand, Action& action);
void define_push_command(CLI::App& subcommand, Action& action);
void define_tag_command(CLI::App& subcommand, Action& action);
void define_login_command(CLI::App& subcommand, Action& action);
void define_select_command(CLI::App& subcommand, Action& action);
void define_check_command(CLI::App& subcommand, Action& action);
void define_index_command(CLI::App& subcommand, Action& action);
void define_compat_command(CLI::App& subcommand, Action& action);
void define_serve_command(CLI::App& subcommand, Action& action);
void define_copy_command(CLI::App& subcommand, Action& action);
void define_completion_command(CLI::App& subcommand, Action& action);
void define_ls_command(CLI::App& subcommand, Action& action);
void define_digest_command(CLI::App& subcommand, Action& action);
void define_delete_command(CLI::App& subcommand, Action& action);
void define_export_command(CLI::App& subcommand, Action& action);
void define_cache_command(CLI::App& subcommand, Action& action);
void define_cdi_command(CLI::App& subcommand, Action& action);

}  // namespace hwimg::cli
