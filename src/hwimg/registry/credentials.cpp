#include "hwimg/registry/credentials.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>

#include <openssl/evp.h>
#include <sys/stat.h>

#include "hwimg/util/files.hpp"
#include "hwimg/util/process.hpp"
#include "hwimg/util/strings.hpp"
#include "hwimg/util/json_reader.hpp"

namespace hwimg::registry {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr std::string_view hub_key = "https://index.docker.io/v1/";
constexpr std::string_view not_found_message = "credentials not found in native keychain";

// "https://host:port/v2/" -> "host:port", as Docker reduces config keys before comparing.
std::string key_host(std::string_view key) {
  if (const auto scheme = key.find("://"); scheme != std::string_view::npos) key = key.substr(scheme + 3);
  return std::string(key.substr(0, key.find('/')));
}

Result<json> read_config(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return json::object();
  HWIMG_TRY_ASSIGN(const auto text, util::read_file(path));
  // No parser message is quoted: it could echo part of a secret.
  auto config = util::json::parse_object(text);
  if (!config) return fail("failed to read {}: not a valid JSON object", path.string());
  return std::move(*config);
}

// A helper is the program docker-credential-NAME found on PATH; a NAME with '/' or a leading '.'
// would make that a path of the config's choosing ("../../tmp/x"), so only Docker's plain names
// pass: letters, digits, '.', '_' and '-', not starting with '.'.
Result<void> check_helper_name(const std::string& helper, std::string_view source) {
  const auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  };
  if (helper.empty() || helper.front() == '.' || !std::ranges::all_of(helper, plain)) {
    return fail("failed to read {}: \"{}\" is not a credential helper name (letters, digits, '.', '_' and '-', not "
                "starting with '.')",
                source, helper);
  }
  return {};
}

// Why a helper failed: its exit status only, since its output may quote what it was given.
std::string helper_failure(const Result<util::ProcessResult>& result) {
  if (!result) return result.error().message;
  return result->timed_out ? std::string("it did not answer within 60 s")
                           : fmt::format("exit status {}", result->exit_status);
}

Result<std::optional<Credentials>> from_helper(const std::string& helper, const std::string& key,
                                               std::string_view source) {
  HWIMG_TRY(check_helper_name(helper, source));
  util::ProcessSpec spec;
  spec.argv = {"docker-credential-" + helper, "get"};
  spec.standard_input = key;
  spec.timeout = std::chrono::seconds(60);
  // The answer (and "credentials not found") is on stdout, as Docker's own client reads it; helpers
  // may print warnings to stderr, which must not spoil the JSON (docs/compatibility.md, Docker credentials).
  spec.standard_error = util::StandardError::separate;
  auto result = util::run_process(spec);
  if (!result) {
    return fail("failed to run credential helper docker-credential-{}: {}", helper, result.error().message);
  }
  const auto output = std::string(util::trim(result->output));
  if (result->exit_status != 0 || result->timed_out) {
    if (output == not_found_message) return std::optional<Credentials>();
    return fail("failed to get credentials for {} from docker-credential-{}: {}", key, helper, helper_failure(result));
  }
  const auto not_expected = [&] {
    return fail("failed to get credentials for {} from docker-credential-{}: its answer is not the expected JSON", key,
                helper);
  };
  const auto reply = util::json::parse_object(output);
  if (!reply) return not_expected();
  const auto secret = util::json::string_member(*reply, "Secret");
  const auto username = util::json::string_member(*reply, "Username");
  if (!secret || !*secret || !username) return not_expected();
  Credentials c;
  c.username = username->value_or("");
  if (c.username == "<token>") {
    c.username.clear();
    c.identity_token = **secret;
  } else {
    c.password = **secret;
  }
  return std::optional<Credentials>(std::move(c));
}

// `source` names the configuration in messages: a file's path, or $DOCKER_AUTH_CONFIG.
Result<std::optional<Credentials>> from_auth_entry(const json& entry, const std::string& key,
                                                   std::string_view source) {
  if (!entry.is_object()) return fail("failed to read {}: auths.\"{}\" is not an object", source, key);
  Credentials c;
  const auto text = [&](const char* name) {
    const auto it = entry.find(name);
    return it != entry.end() ? util::json::as_string(*it).value_or("") : std::string();
  };
  if (const auto auth = text("auth"); !auth.empty()) {
    const auto decoded = base64_decode(auth);
    const auto colon = decoded ? decoded->find(':') : std::string::npos;
    if (!decoded || colon == std::string::npos || colon == 0) {
      return fail("failed to read {}: auths.\"{}\".auth is not base64 of user:password", source, key);
    }
    c.username = decoded->substr(0, colon);
    c.password = decoded->substr(colon + 1);
  } else {
    c.username = text("username");
    c.password = text("password");
  }
  c.identity_token = text("identitytoken");
  c.registry_token = text("registrytoken");
  if (c.username.empty() && c.identity_token.empty() && c.registry_token.empty()) return std::optional<Credentials>();
  return std::optional<Credentials>(std::move(c));
}

}  // namespace

std::string credential_key(std::string_view registry) {
  if (registry == "docker.io" || registry == "index.docker.io" || registry == "registry-1.docker.io") {
    return std::string(hub_key);
  }
  return std::string(registry);
}

namespace {

// credHelpers, then credsStore, then auths of one configuration.
Result<std::optional<Credentials>> lookup_in_config(const json& config, std::string_view registry,
                                                    std::string_view source) {
  const auto key = credential_key(registry);
  if (const auto helpers = config.find("credHelpers"); helpers != config.end() && helpers->is_object()) {
    for (const auto& [name, helper] : helpers->items()) {
      if (name != key && key_host(name) != key_host(key)) continue;
      if (auto helper_name = util::json::as_string(helper)) return from_helper(*helper_name, key, source);
    }
  }
  if (const auto store = config.find("credsStore"); store != config.end()) {
    if (auto store_name = util::json::as_string(*store); store_name && !store_name->empty()) {
      return from_helper(*store_name, key, source);
    }
  }
  const auto auths = config.find("auths");
  if (auths == config.end() || !auths->is_object()) return std::optional<Credentials>();
  if (const auto exact = auths->find(key); exact != auths->end()) return from_auth_entry(*exact, key, source);
  for (const auto& [name, entry] : auths->items()) {
    if (key_host(name) == key_host(key)) return from_auth_entry(entry, name, source);
  }
  return std::optional<Credentials>();
}

}  // namespace

Result<std::optional<Credentials>> lookup_credentials(const fs::path& config_dir, std::string_view registry,
                                                      std::string_view auth_config) {
  if (!util::trim(auth_config).empty()) {
    // No parser message is quoted: it could echo part of a secret.
    const auto config = util::json::parse_object(auth_config);
    if (!config) return fail("failed to read $DOCKER_AUTH_CONFIG: not a valid JSON object");
    HWIMG_TRY_ASSIGN(auto found, lookup_in_config(*config, registry, "$DOCKER_AUTH_CONFIG"));
    if (found) return found;
  }
  const auto path = config_dir / "config.json";
  HWIMG_TRY_ASSIGN(const auto config, read_config(path));
  return lookup_in_config(config, registry, path.string());
}

Result<void> store_credentials(const fs::path& config_dir, std::string_view registry, const Credentials& credentials) {
  const auto path = config_dir / "config.json";
  HWIMG_TRY_ASSIGN(auto config, read_config(path));
  const auto key = credential_key(registry);
  std::string helper;
  if (const auto helpers = config.find("credHelpers"); helpers != config.end() && helpers->is_object()) {
    if (const auto it = helpers->find(key); it != helpers->end()) helper = util::json::as_string(*it).value_or("");
  }
  if (helper.empty()) {
    if (const auto store = config.find("credsStore"); store != config.end()) {
      helper = util::json::as_string(*store).value_or("");
    }
  }
  if (!helper.empty()) {
    HWIMG_TRY(check_helper_name(helper, path.string()));
    util::ProcessSpec spec;
    spec.argv = {"docker-credential-" + helper, "store"};
    spec.standard_input =
        json{{"ServerURL", key}, {"Username", credentials.username}, {"Secret", credentials.password}}.dump();
    spec.timeout = std::chrono::seconds(60);
    auto result = util::run_process(spec);
    if (!result || result->exit_status != 0 || result->timed_out) {
      return fail("failed to store credentials for {} with docker-credential-{}: {}", key, helper,
                  helper_failure(result));
    }
    return {};
  }
  if (!config["auths"].is_object()) config["auths"] = json::object();
  config["auths"][key] = json{{"auth", base64_encode(credentials.username + ":" + credentials.password)}};
  std::error_code ec;
  if (!fs::exists(config_dir, ec)) {
    HWIMG_TRY(util::make_directories(config_dir));
    if (::chmod(config_dir.c_str(), 0700) != 0) {
      return fail("failed to set the mode of {}: {}", config_dir.string(), util::errno_text(errno));
    }
  }
  return util::write_file_atomic(fs::weakly_canonical(path, ec), config.dump(1, '\t') + "\n", 0600);
}

void warn_if_readable_by_others(const fs::path& config_dir, util::Output& output) {
  if (config_dir.empty()) return;
  const auto path = config_dir / "config.json";
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || (info.st_mode & 044) == 0) return;
  static std::mutex warned_mutex;
  static std::set<std::string> warned;
  {
    std::lock_guard lock(warned_mutex);
    if (!warned.insert(path.string()).second) return;
  }
  output.warning(fmt::format("{} holds registry credentials and can be read by {} (mode {:04o}); run chmod 600 {}",
                             path.string(), (info.st_mode & 040) != 0 ? "its group" : "every user",
                             info.st_mode & 07777, path.string()));
}

std::string base64_encode(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  const auto trimmed = util::trim(text);
  if (trimmed.size() % 4 != 0) return std::nullopt;
  std::string out(3 * (trimmed.size() / 4), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(trimmed.data()), static_cast<int>(trimmed.size()));
  if (n < 0) return std::nullopt;
  auto size = static_cast<std::size_t>(n);
  // EVP_DecodeBlock counts padding as zero bytes.
  if (trimmed.ends_with("==")) size -= 2;
  else if (trimmed.ends_with('=')) size -= 1;
  out.resize(size);
  return out;
}

}  // namespace hwimg::registry
