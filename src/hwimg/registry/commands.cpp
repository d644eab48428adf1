#include "hwimg/registry/commands.hpp"

#include <istream>
#include <iterator>

#include "hwimg/oci/layout.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::registry {

Result<int> push_command(const std::string& source, const std::string& destination, const ClientOptions& options) {
  if (!oci::is_layout_reference(source)) {
    return fail_usage("failed to push {}: the source must be an image layout, oci:DIR[:TAG]", source);
  }
  auto layout = oci::parse_layout_reference(source);
  if (!layout) return std::unexpected(Error{layout.error().message, ExitCode::usage});
  auto ref = parse_reference(destination);
  if (!ref) return std::unexpected(Error{ref.error().message, ExitCode::usage});
  auto client = Client::create(options);
  if (!client) return std::unexpected(client.error());
  auto summary = client->push_layout(layout->directory, layout->tag, *ref);
  if (!summary) return std::unexpected(summary.error());
  fmt::print("pushed {}@{}: {} blobs uploaded ({:.1f} MiB), {} mounted, {} already present; {} manifests pushed, "
             "{} already present; {} tags; {} requests\n",
             summary->reference, summary->digest.str(), summary->blobs_uploaded,
             static_cast<double>(summary->bytes_uploaded) / (1 << 20), summary->blobs_mounted, summary->blobs_present,
             summary->manifests_pushed, summary->manifests_present, summary->tags.size(), summary->requests);
  return 0;
}

Result<int> tag_command(const std::string& reference, const std::vector<std::string>& new_tags,
                        const ClientOptions& options) {
  auto ref = parse_reference(reference);
  if (!ref) return std::unexpected(Error{ref.error().message, ExitCode::usage});
  for (const auto& t : new_tags) {
    if (auto r = validate_registry_tag(t); !r) return std::unexpected(Error{r.error().message, ExitCode::usage});
  }
  auto client = Client::create(options);
  if (!client) return std::unexpected(client.error());
  auto digest = client->tag(*ref, new_tags);
  if (!digest) return std::unexpected(digest.error());
  for (const auto& t : new_tags) fmt::print("{}@{}\n", ref->with_tag(t).str(), digest->str());
  return 0;
}

Result<int> login_command(const std::string& registry, const std::string& username, std::istream& password_input,
                          const ClientOptions& options) {
  auto parsed = parse_reference(registry + "/x");
  if (!parsed || parsed->registry != registry) {
    return fail_usage("failed to log in: \"{}\" is not a registry host[:port]", registry);
  }
  if (username.empty()) return fail_usage("failed to log in to {}: the username is empty", registry);
  std::string password(std::istreambuf_iterator<char>(password_input), {});
  while (!password.empty() && (password.back() == '\n' || password.back() == '\r')) password.pop_back();
  if (password.empty()) return fail_usage("failed to log in to {}: no password on standard input", registry);
  const Credentials credentials{username, password, {}, {}};
  auto client = Client::create(options);
  if (!client) return std::unexpected(client.error());
  if (auto r = client->check_login(registry, credentials); !r) return std::unexpected(r.error());
  const auto config_dir = options.docker_config_dir.empty() ? default_docker_config_dir() : options.docker_config_dir;
  if (auto r = store_credentials(config_dir, registry, credentials); !r) return std::unexpected(r.error());
  fmt::print("login succeeded for {}; credentials stored for {}\n", registry, credential_key(registry));
  return 0;
}

}  // namespace hwimg::registry
