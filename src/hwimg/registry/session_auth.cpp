// The session's authentication: credentials sent before the registry asks (Basic, where stored),
// challenges learned from a 401, bearer tokens fetched and cached per scope.

#include <algorithm>

#include "hwimg/registry/detail/session.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/util/strings.hpp"
#include "hwimg/util/json_reader.hpp"

namespace hwimg::registry {
namespace {

using namespace std::chrono_literals;

constexpr std::chrono::seconds min_token_lifetime = 60s;
constexpr std::chrono::seconds max_token_lifetime = 24h;
constexpr auto token_margin = 5s;
// A token service that refused the credentials is not asked again for the same scopes this soon:
// requests whose 401 came after the refusal fail with it (a wrong password tried once, not once
// per request), and a long-running mirror asks again once it may have been fixed.
constexpr auto refusal_memory = 30s;

// Whether a token asked for `granted` (space-joined scopes) was asked for every one of `wanted`,
// a repository's "pull,push" standing for its "pull" and "push" too.
bool token_covers(std::string_view granted, const Scopes& wanted) {
  const auto have = util::split(granted, ' ');
  return std::ranges::all_of(wanted, [&](const std::string& scope) {
    if (std::ranges::find(have, scope) != have.end()) return true;
    const auto colon = scope.rfind(':');
    return colon != std::string::npos &&
           std::ranges::find(have, scope.substr(0, colon) + ":pull,push") != have.end();
  });
}

}  // namespace

Result<TokenAnswer> parse_token_answer(std::string_view body) {
  const auto document = util::json::parse_object(body);
  if (!document) return fail("the answer is not a JSON object");
  TokenAnswer out;
  for (const auto* key : {"access_token", "token"}) {
    HWIMG_TRY_ASSIGN(const auto value, with_context(util::json::string_member(*document, key), key));
    if (value && !value->empty()) {
      out.token = *value;
      break;
    }
  }
  if (out.token.empty()) return fail("the answer holds no token");
  // expires_in is an integer of seconds (distribution's token spec); anything else, or a lifetime
  // too long to add to a clock, is read as the shortest lifetime: the token is asked again sooner.
  const auto expires = util::json::integer_member(*document, "expires_in");
  std::int64_t seconds = expires && *expires ? **expires : 0;
  seconds = std::clamp<std::int64_t>(seconds, min_token_lifetime.count(), max_token_lifetime.count());
  out.lifetime = std::chrono::seconds(seconds);
  return out;
}

Result<const Credentials*> Session::known_credentials(RegistryState& state) {
  if (const auto it = m_credential_overrides.find(state.name); it != m_credential_overrides.end()) {
    state.credentials = it->second;
  }
  if (!state.credentials) {
    warn_if_readable_by_others(m_options.docker_config_dir, *m_options.output);
    HWIMG_TRY_ASSIGN(const auto credentials,
                     lookup_credentials(m_options.docker_config_dir, state.name, m_options.docker_auth_config));
    state.credentials = credentials.value_or(Credentials{});
  }
  return &*state.credentials;
}

std::optional<std::string> Session::preemptive_basic(RegistryState& state) {
  // Only before the registry said how it authenticates: a 401 then teaches the challenge as usual.
  if (state.challenge || state.answered) return std::nullopt;
  const auto credentials = known_credentials(state);
  // A lookup that failed (a broken credential helper) is reported if the registry asks for them.
  if (!credentials || (*credentials)->username.empty()) return std::nullopt;
  return "Basic " + base64_encode((*credentials)->username + ":" + (*credentials)->password);
}

void Session::accepted_preemptively(RegistryState& state) {
  state.credentials_accepted = true;
  if (!state.challenge) state.challenge = Challenge{"basic", {}};
}

Result<void> Session::learn_challenge(RegistryState& state, const std::string& registry, const Response& response) {
  std::optional<Challenge> basic;
  std::optional<Challenge> bearer;
  for (const auto& value : response.header_values("www-authenticate")) {
    for (auto& c : parse_challenges(value)) {
      if (c.scheme == "bearer" && !bearer) bearer = std::move(c);
      else if (c.scheme == "basic" && !basic) basic = std::move(c);
    }
  }
  state.challenge = bearer ? bearer : basic;
  state.challenge_remembered = false;
  if (state.challenge) m_memory.remember(state.base_url, *state.challenge);
  if (!state.challenge) {
    return fail("failed to authenticate to {}: HTTP 401 without a Basic or Bearer challenge", registry);
  }
  HWIMG_TRY(known_credentials(state));
  return {};
}

std::string Session::auth_failure(const std::string& registry, const Response& response) const {
  const auto it = m_registries.find(registry);
  const bool have = it != m_registries.end() && it->second.credentials &&
                    (!it->second.credentials->username.empty() || !it->second.credentials->identity_token.empty() ||
                     !it->second.credentials->registry_token.empty());
  if (!have) {
    return fmt::format("failed to authenticate to {}: the registry requires credentials and none are configured "
                       "(run: hwimg login {})", registry, registry);
  }
  // `hwimg login` is checking what the user just typed: sending them back to login is no help.
  if (m_credential_overrides.contains(registry)) {
    return fmt::format("failed to log in to {}: user name or password rejected by {} ({})", registry, registry,
                       describe_status(response));
  }
  return fmt::format("failed to authenticate to {}: the registry rejected the configured credentials ({}); "
                     "check them with: hwimg login {}", registry, describe(response), registry);
}

bool realm_allowed(std::string_view realm) {
  // Credentials go to the realm: never in clear across a network (docs/compatibility.md#registry-authentication).
  return realm.starts_with("https://") || (realm.starts_with("http://") && is_loopback_host(url_host(realm)));
}

void Session::with_authorization(RegistryState& state, const Scopes& scopes, const std::optional<std::string>& refused,
                                 AuthorizationDone done) {
  if (!state.challenge) return done(preemptive_basic(state));
  const auto known = known_credentials(state);
  if (!known) return done(std::unexpected(known.error()));
  const auto& credentials = **known;
  if (state.challenge->scheme == "basic") {
    if (credentials.username.empty()) return done(std::optional<std::string>());
    return done("Basic " + base64_encode(credentials.username + ":" + credentials.password));
  }
  if (!credentials.registry_token.empty()) return done("Bearer " + credentials.registry_token);
  auto it = state.tokens.find(util::join(scopes, " "));
  // A push's token serves the reads and writes that follow it (a 401 still refreshes).
  if (it == state.tokens.end()) it = std::ranges::find_if(state.tokens, [&](const auto& t) { return token_covers(t.first, scopes); });
  if (it != state.tokens.end() && std::chrono::steady_clock::now() < it->second.expires &&
      refused != "Bearer " + it->second.value) {
    return done("Bearer " + it->second.value);
  }
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [asked, refusal] : state.token_refusals) {
    if (token_covers(asked, scopes) && now < refusal.until) return done(std::unexpected(refusal.error));
  }
  // Requests sent at once share one token: the first asks, the others wait for its answer.
  for (auto& [granted, waiting] : state.token_fetches) {
    if (token_covers(granted, scopes)) return waiting.push_back(std::move(done));
  }
  state.token_fetches[util::join(scopes, " ")].push_back(std::move(done));
  fetch_token(state, scopes, credentials);
}

void Session::fetch_token(RegistryState& state, const Scopes& scopes, const Credentials& credentials) {
  const auto key = util::join(scopes, " ");
  const auto realm = state.challenge->param("realm");
  if (!realm_allowed(realm)) {
    return token_fetched(state, key, fail("failed to get a registry token: the realm \"{}\" is not an https URL", realm));
  }
  // Until the registry has answered, its connection is made while the token service answers.
  if (!state.answered && !same_origin(realm, state.base_url)) {
    send(Request{Method::get, state.base_url + "/v2/"}, Retry::never, 0,
         [this, &state, sent_base = state.base_url](Response r) { switch_scheme(state, sent_base, r); });
  }
  Request request;
  const auto service = state.challenge->param("service");
  if (!credentials.identity_token.empty()) {
    request.method = Method::post;
    request.url = realm;
    request.headers.push_back("Content-Type: application/x-www-form-urlencoded");
    request.body = fmt::format("grant_type=refresh_token&client_id=hwimg&refresh_token={}&service={}&scope={}",
                               url_encode(credentials.identity_token), url_encode(service), url_encode(key));
  } else {
    request.url = realm + (realm.find('?') == std::string::npos ? "?" : "&") + "service=" + url_encode(service);
    for (const auto& scope : scopes) request.url += "&scope=" + url_encode(scope);
    if (!credentials.username.empty()) {
      request.headers.push_back("Authorization: Basic " +
                                base64_encode(credentials.username + ":" + credentials.password));
    }
  }
  // A remembered realm that does not answer is not waited for: the registry's challenge is asked.
  send(std::move(request), state.challenge_remembered ? Retry::never : Retry::safe, 0, [this, &state, key](Response r) {
    if (!r.ok() || r.status != 200) {
      if (r.ok() && (r.status == 401 || r.status == 403)) {
        Result<std::string> refused =
            m_credential_overrides.contains(state.name)
                ? fail("failed to log in to {}: user name or password rejected by its token service ({})", state.name,
                       describe_status(r))
                : fail("failed to get a registry token: the token service rejected the credentials ({})", describe(r));
        state.token_refusals[key] = {refused.error(), std::chrono::steady_clock::now() + refusal_memory};
        return token_fetched(state, key, std::move(refused));
      }
      return token_fetched(state, key, fail("failed to get a registry token: {}", describe(r)));
    }
    auto answer = parse_token_answer(r.body);
    if (!answer) return token_fetched(state, key, fail("failed to get a registry token: {}", answer.error().message));
    state.tokens[key] = Token{answer->token, std::chrono::steady_clock::now() + answer->lifetime - token_margin};
    token_fetched(state, key, "Bearer " + answer->token);
  });
}

void Session::token_fetched(RegistryState& state, const std::string& key, Result<std::optional<std::string>> header) {
  if (!header && state.challenge_remembered && !state.token_refusals.contains(key)) {
    // The realm remembered from an earlier command did not answer as a token service (a refusal
    // of the credentials is theirs, not the realm's): ask the registry for its challenge.
    m_options.output->log(fmt::format("forgetting the token realm remembered for {}: {}", state.name, header.error().message));
    m_memory.forget(state.base_url);
    state.challenge.reset();
    state.challenge_remembered = false;
    header = preemptive_basic(state);
  }
  const auto waiting = std::move(state.token_fetches[key]);
  state.token_fetches.erase(key);
  for (const auto& done : waiting) done(header);
}

void Session::use_credentials(const std::string& registry, Credentials credentials) {
  m_credential_overrides[registry] = std::move(credentials);
}

}  // namespace hwimg::registry
