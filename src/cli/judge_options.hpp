#pragma once
// Flags `select` and `check` share: the image, the host to judge it against, the GPUs the container
// gets, --explain and the registry's.

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "hwimg/commands/select.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

struct JudgeFlags {
  commands::JudgeArguments arguments;
  std::string host_file;
  std::string gpus;
  bool explain = false;
  CLI::Option* host_option = nullptr;
  CLI::Option* gpus_option = nullptr;
};

// `format` is added by the caller, between --gpus and --explain.
inline void add_judge_options(CLI::App& command, JudgeFlags& flags, const std::string& reference_help,
                              const std::function<void()>& add_format, const std::string& explain_help) {
  command.add_option("reference", flags.arguments.reference, reference_help)->required();
  flags.host_option = command.add_option("--host", flags.host_file, "Judge against this facts file (hwimg probe "
                                                                    "--format json) instead of probing this host")
                          ->check(CLI::ExistingFile);
  flags.gpus_option = command.add_option("--gpus", flags.gpus, "The GPUs the container will get: all, none, or "
                                                               "indexes / UUIDs such as 0,1 (default: "
                                                               "NVIDIA_VISIBLE_DEVICES, else all)");
  add_format();
  command.add_flag("--explain", flags.explain, explain_help);
  add_registry_options(command, flags.arguments.registry);
}

// The shared arguments with what the command line gave.
[[nodiscard]] inline commands::JudgeArguments judge_arguments(const JudgeFlags& flags) {
  auto arguments = flags.arguments;
  if (flags.host_option->count() > 0) arguments.host_file = flags.host_file;
  if (flags.gpus_option->count() > 0) arguments.gpus = flags.gpus;
  arguments.explain = flags.explain ? commands::Explain::yes : commands::Explain::no;
  return arguments;
}

}  // namespace hwimg::cli
