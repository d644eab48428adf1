#include "hwimg/commands/registry_flags.hpp"

#include "hwimg/commands/environment.hpp"

namespace hwimg::commands {

registry::ClientOptions client_options(const RegistryFlags& flags, util::Output& output) {
  auto options = flags.options;
  if (options.docker_config_dir.empty()) options.docker_config_dir = docker_config_dir();
  options.output = &output;
  return options;
}

}  // namespace hwimg::commands
