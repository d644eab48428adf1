#include "hwimg/commands/registry_flags.hpp"

#include "hwimg/commands/environment.hpp"

namespace hwimg::commands {

registry::ClientOptions client_options(const RegistryFlags& flags, util::Output& output) {
  auto options = flags.options;
  // An explicit --docker-config is the only source; otherwise $DOCKER_AUTH_CONFIG comes first,
  // as with Docker's CLI (docs/compatibility.md#docker-auth-config).
  if (options.docker_config_dir.empty()) {
    options.docker_config_dir = docker_config_dir();
    options.docker_auth_config = variable("DOCKER_AUTH_CONFIG").value_or("");
  }
  options.challenge_file = cache_root() / "registries.json";
  options.output = &output;
  return options;
}

}  // namespace hwimg::commands
