#pragma once
// The connection to registries behind Client and the pusher: endpoint discovery (HTTPS, or plain
// HTTP where allowed), authentication (anonymous, basic, bearer tokens cached per scope), and
// retries with exponential backoff and jitter. Internal to hwimg::registry.

#include <chrono>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/registry/detail/challenge.hpp"
#include "hwimg/registry/detail/challenge_memory.hpp"
#include "hwimg/registry/credentials.hpp"
#include "hwimg/registry/detail/http.hpp"
#include "hwimg/registry/detail/retry.hpp"
#include "hwimg/registry/options.hpp"

namespace hwimg::registry {

// Whether a request may be sent again after a transient failure.
enum class Retry { safe, never };

enum class Probe { ping, lazy };

// Who authorises a request: the session (Docker config credentials, tokens, re-authentication on
// 401), the session but with a 401 that remains answered as a response (a mirror passing the
// challenge on to its client), or whoever built it: its own Authorization header, or none, is sent
// as it is and a 401 is answered as a response (a mirror forwarding its client's credentials).
enum class Authorization { session, session_or_challenge, as_given };

using Scopes = std::vector<std::string>;
using ExchangeDone = std::function<void(Result<Response>)>;

// "repository:NAME:pull" or "repository:NAME:pull,push".
[[nodiscard]] std::string repository_scope(std::string_view repository, std::string_view actions);


// A token service's answer: its token (access_token, else token) and how long it may be used (its
// expires_in, at least 60 s and at most a day), read whatever the types of its fields.
struct TokenAnswer {
  std::string token;
  std::chrono::seconds lifetime{0};
};
[[nodiscard]] Result<TokenAnswer> parse_token_answer(std::string_view body);

// Whether credentials may be sent to this token realm: https, or plain HTTP on this machine.
[[nodiscard]] bool realm_allowed(std::string_view realm);

class Session {
public:
  [[nodiscard]] static Result<std::unique_ptr<Session>> create(ClientOptions options);

  [[nodiscard]] const ClientOptions& options() const { return m_options; }
  [[nodiscard]] Transport& transport() { return m_transport; }

  // "https://host:port" for a registry, refusing plain HTTP to a non-loopback host without
  // `insecure` before any connection. Probe::ping checks /v2/ now (and learns the auth challenge);
  // Probe::lazy leaves that to the first real request, saving a round trip for single reads.
  [[nodiscard]] Result<std::string> connect(const std::string& registry, Probe probe);

  // Sends `request` (URL relative to the registry unless absolute) with credentials for `scopes`,
  // re-authenticating once on 401 and retrying transient failures when `retry` allows. Errors are
  // only for authentication; HTTP statuses and exhausted transport failures come as Response.
  // Any number may be sent at once, before the registry's scheme or challenge is known: requests
  // that needed the other scheme are sent again on it, and one token per scope serves them all.
  void exchange(const std::string& registry, Request request, Scopes scopes, Retry retry, ExchangeDone done,
                Authorization authorization = Authorization::session);
  [[nodiscard]] Result<Response> exchange_now(const std::string& registry, Request request, Scopes scopes,
                                              Retry retry, Authorization authorization = Authorization::session);

  // Uses these credentials for `registry` instead of the Docker configuration (login checks them).
  void use_credentials(const std::string& registry, Credentials credentials);

  [[nodiscard]] std::mt19937& random() { return m_random; }

private:
  struct Token {
    std::string value;
    std::chrono::steady_clock::time_point expires;
  };
  struct Refusal {
    Error error;
    std::chrono::steady_clock::time_point until;
  };
  // The Authorization header for a request (nullopt: none), or why there is none.
  using AuthorizationDone = std::function<void(Result<std::optional<std::string>>)>;
  struct RegistryState {
    std::string name;       // as the user wrote it (the key of its credentials)
    std::string authority;  // host[:port] the requests go to
    std::string base_url;
    bool scheme_known = false;  // an answer came back on base_url's scheme
    bool http_allowed = false;  // loopback or --insecure: plain HTTP when TLS is not spoken
    bool answered = false;  // some exchange got an HTTP answer on the registry's scheme
    bool credentials_accepted = false;  // a request with them was answered other than 401
    std::optional<Challenge> challenge;  // the scheme /v2/ asked for; nullopt: anonymous
    bool challenge_remembered = false;   // from an earlier command, not yet confirmed by the registry
    std::optional<Credentials> credentials;
    std::map<std::string, Token> tokens;  // by space-joined scopes
    std::map<std::string, std::vector<AuthorizationDone>> token_fetches;  // in flight: who waits
    std::map<std::string, Refusal> token_refusals;  // the token service refused these scopes
  };

  Session(ClientOptions options, Transport transport);
  // The registry's state, created on first use; nullptr (with `error`) when it must not be contacted.
  RegistryState* state_for(const std::string& registry, std::string& error);
  // Switches a registry whose first answer shows it speaks the other scheme (plain HTTP or TLS),
  // where plain HTTP is allowed; true when the request sent to `sent_base` must go again (on the
  // scheme this answer, or an earlier one, showed).
  bool switch_scheme(RegistryState& state, const std::string& sent_base, const Response& response);
  void send(Request request, Retry retry, unsigned attempt, std::function<void(Response)> done);
  // The header for `scopes`: Basic, a cached token other than `refused` (the one a 401 answered),
  // or a token fetched once for every request that waits for it.
  void with_authorization(RegistryState& state, const Scopes& scopes, const std::optional<std::string>& refused,
                          AuthorizationDone done);
  void fetch_token(RegistryState& state, const Scopes& scopes, const Credentials& credentials);
  void token_fetched(RegistryState& state, const std::string& key, Result<std::optional<std::string>> header);
  // `refused`: set on the one attempt after a 401, to the Authorization that was refused ("" none).
  void attempt(const std::string& registry, Request request, Scopes scopes, Retry retry,
               std::optional<std::string> refused, ExchangeDone done,
               Authorization authorization = Authorization::session);
  void attempt_as_given(const std::string& registry, Request request, Retry retry, ExchangeDone done);
  [[nodiscard]] Result<void> learn_challenge(RegistryState& state, const std::string& registry,
                                             const Response& response);
  // The credentials for the registry (an override, else the Docker configuration), looked up once.
  [[nodiscard]] Result<const Credentials*> known_credentials(RegistryState& state);
  // "Basic ..." for the first request to a registry whose stored credentials are a username and
  // password: a registry that takes them answers at once, saving the round trip of a 401; one that
  // wants a token answers 401 with its challenge, as it would have anyway.
  [[nodiscard]] std::optional<std::string> preemptive_basic(RegistryState& state);
  // Credentials sent before a challenge were taken: keep sending them (as Basic).
  static void accepted_preemptively(RegistryState& state);
  [[nodiscard]] std::string auth_failure(const std::string& registry, const Response& response) const;

  ClientOptions m_options;
  Transport m_transport;
  std::map<std::string, RegistryState> m_registries;
  std::map<std::string, Credentials> m_credential_overrides;
  std::mt19937 m_random;
  ChallengeMemory m_memory;
};

// Checks an exchange's status; otherwise "failed to <what>: <describe>".
[[nodiscard]] Result<Response> expect_status(Result<Response> result, std::initializer_list<long> statuses,
                                             std::string_view what);

}  // namespace hwimg::registry
