#pragma once
// Flags every registry subcommand shares (push, tag, login; inspect on registry references).

#include <CLI/CLI.hpp>

#include "hwimg/registry/options.hpp"

namespace hwimg::cli {

inline void add_registry_options(CLI::App& command, registry::ClientOptions& options) {
  command.add_option("--ca-file", options.ca_file, "PEM file of CA certificates to trust for the registry")
      ->check(CLI::ExistingFile);
  command.add_flag("--insecure", options.insecure,
                   "skip TLS certificate verification and allow plain HTTP to any registry");
  command.add_flag("--plain-http", options.plain_http,
                   "speak plain HTTP (allowed for loopback registries, others need --insecure)");
  command.add_flag("-v,--verbose", options.verbose, "log every HTTP exchange to stderr (credentials are never shown)");
  command.add_option("--docker-config", options.docker_config_dir,
                     "directory of config.json (default: $DOCKER_CONFIG or ~/.docker)");
}

}  // namespace hwimg::cli
