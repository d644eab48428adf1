#pragma once
// The registry subcommands (push, tag, login) as library functions returning the exit code.

#include <iosfwd>
#include <string>
#include <vector>

#include "hwimg/registry/options.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::registry {

// hwimg push oci:DIR[:TAG] REF: prints one summary line on stdout.
[[nodiscard]] Result<int> push_command(const std::string& source, const std::string& destination,
                                       const ClientOptions& options);

// hwimg tag REF NEWTAG...: prints the digest that got the new tags.
[[nodiscard]] Result<int> tag_command(const std::string& reference, const std::vector<std::string>& new_tags,
                                      const ClientOptions& options);

// hwimg login REGISTRY --username U --password-stdin: checks the credentials with the registry,
// then stores them (config.json mode 0600, or the configured credential helper).
[[nodiscard]] Result<int> login_command(const std::string& registry, const std::string& username,
                                        std::istream& password_input, const ClientOptions& options);

}  // namespace hwimg::registry
