#pragma once
// Flags every registry subcommand shares (push, tag, login, index create; inspect and select on
// registry references).

#include <CLI/CLI.hpp>

#include "hwimg/commands/registry_flags.hpp"

namespace hwimg::cli {

enum class VerboseFlag { add, omit };  // omit: the command has a -v of its own

inline void add_registry_options(CLI::App& command, commands::RegistryFlags& flags,
                                 VerboseFlag verbose = VerboseFlag::add) {
  auto& options = flags.options;
  command.add_option("--ca-file", options.ca_file, "PEM file of CA certificates to trust for the registry")
      ->check(CLI::ExistingFile);
  command.add_flag("--insecure", options.insecure,
                   "skip TLS certificate verification and allow plain HTTP to any registry");
  command.add_flag("--plain-http", options.plain_http,
                   "speak plain HTTP (allowed for loopback registries, others need --insecure)");
  if (verbose == VerboseFlag::add) {
    command.add_flag_callback(
        "-v,--verbose", [&flags] { flags.verbose = commands::Verbose::yes; },
        "log every HTTP exchange to stderr (credentials are never shown)");
  }
  command.add_option("--docker-config", options.docker_config_dir,
                     "directory of config.json (default: $DOCKER_AUTH_CONFIG's credentials, then $DOCKER_CONFIG "
                     "or ~/.docker)");
}

}  // namespace hwimg::cli
