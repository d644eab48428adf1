#pragma once
// The registry flags every command that reads or writes a registry shares, and the client options
// they make with the environment's defaults (Docker's config directory) filled in.

#include "hwimg/commands/terminal_output.hpp"
#include "hwimg/registry/options.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::commands {

struct RegistryFlags {
  registry::ClientOptions options;  // --ca-file, --insecure, --plain-http, --docker-config, -j, --chunk-size
  Verbose verbose = Verbose::no;    // -v: every HTTP exchange on stderr
};

[[nodiscard]] registry::ClientOptions client_options(const RegistryFlags& flags, util::Output& output);

}  // namespace hwimg::commands
