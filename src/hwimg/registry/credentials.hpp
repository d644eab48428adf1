#pragma once
// Registry credentials from Docker's client configuration (config.json, credential helpers), and
// storing them for `hwimg login`. Secrets never go into error messages.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "hwimg/util/error.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::registry {

struct Credentials {
  std::string username;
  std::string password;
  std::string identity_token;  // OAuth2 refresh token, exchanged with grant_type=refresh_token
  std::string registry_token;  // a bearer token sent to the registry as is
};

// The config.json key Docker uses for a registry: Docker Hub's legacy URL, else host[:port].
[[nodiscard]] std::string credential_key(std::string_view registry);

// Credentials for `registry` (host[:port]): credHelpers, then credsStore, then auths, first of
// `auth_config` (the text of $DOCKER_AUTH_CONFIG, a whole config.json; empty: none), then, when
// that has none for the registry, of config_dir/config.json (docs/compatibility.md#docker-auth-config).
// nullopt when none are configured; errors for unreadable configurations or a failing helper.
[[nodiscard]] Result<std::optional<Credentials>> lookup_credentials(const std::filesystem::path& config_dir,
                                                                    std::string_view registry,
                                                                    std::string_view auth_config = {});

// Saves a username and password: through the configured helper, else into auths, writing
// config.json atomically with mode 0600 (directory 0700) and keeping every other key.
[[nodiscard]] Result<void> store_credentials(const std::filesystem::path& config_dir, std::string_view registry,
                                             const Credentials& credentials);

// Warns through `output`, once per process and file, when config_dir/config.json can be read by
// its group or by others: it holds credentials, and Docker's CLI keeps it 0600.
void warn_if_readable_by_others(const std::filesystem::path& config_dir, util::Output& output);

[[nodiscard]] std::string base64_encode(std::string_view data);
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);

}  // namespace hwimg::registry
