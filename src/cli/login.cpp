#include <iostream>
#include <memory>

#include "commands.hpp"
#include "hwimg/commands/registry_commands.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_login_command(CLI::App& subcommand, Action& action) {
  struct Arguments {
    std::string registry;
    std::string username;
    bool password_stdin = false;
    commands::RegistryFlags flags;
  };
  auto args = std::make_shared<Arguments>();
  auto* command = &subcommand;
  command->add_option("REGISTRY", args->registry, "host[:port]")->required();
  command->add_option("-u,--username", args->username, "user name")->required();
  // A password flag would leak into shell history and the process list, so only stdin is offered.
  command->add_flag("--password-stdin", args->password_stdin, "read the password from standard input")->required();
  add_registry_options(*command, args->flags);
  command->callback([args, &action] {
    action = [args] { return commands::run_login(args->registry, args->username, std::cin, args->flags); };
  });
}

}  // namespace hwimg::cli
