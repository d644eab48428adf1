#include "hwimg/registry/detail/session.hpp"

#include <algorithm>


#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/util/strings.hpp"
#include "hwimg/util/json_reader.hpp"

namespace hwimg::registry {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string host_of(std::string_view registry) {
  if (registry.starts_with('[')) return std::string(registry.substr(1, registry.find(']') - 1));
  return std::string(registry.substr(0, registry.find(':')));
}

}  // namespace

std::string repository_scope(std::string_view repository, std::string_view actions) {
  return fmt::format("repository:{}:{}", repository, actions);
}

const std::string& manifest_accept_header() {
  static const std::string header =
      fmt::format("Accept: {}, {}, {}, {}", oci::media_type::index, oci::media_type::manifest,
                  oci::media_type::docker_manifest_list, oci::media_type::docker_manifest);
  return header;
}

Result<Response> expect_status(Result<Response> result, std::initializer_list<long> statuses, std::string_view what) {
  HWIMG_TRY(with_context(result, fmt::format("failed to {}", what)));
  if (!result->ok() || std::find(statuses.begin(), statuses.end(), result->status) == statuses.end()) {
    return fail("failed to {}: {}", what, describe(*result));
  }
  return result;
}

Session::Session(ClientOptions options, Transport transport)
    : m_options(std::move(options)), m_transport(std::move(transport)), m_random(std::random_device{}()),
      m_memory(ChallengeMemory::load(m_options.challenge_file)) {}

Result<std::unique_ptr<Session>> Session::create(ClientOptions options) {
  if (options.jobs == 0) options.jobs = 1;
  if (options.max_attempts == 0) options.max_attempts = 1;
  TransportOptions transport_options;
  transport_options.ca_file = options.ca_file;
  transport_options.verify_tls = !options.insecure;
  transport_options.output = options.output;
  transport_options.cancellation = options.cancellation;
  // The -j upload connections (HTTP/1.1) plus one multiplexed HTTP/2 connection and a spare.
  transport_options.max_host_connections = static_cast<long>(options.jobs) + 2;
  HWIMG_TRY_ASSIGN(auto transport, Transport::create(transport_options));
  return std::unique_ptr<Session>(new Session(std::move(options), std::move(transport)));
}

Session::RegistryState* Session::state_for(const std::string& registry, std::string& error) {
  if (const auto it = m_registries.find(registry); it != m_registries.end()) return &it->second;
  const bool loopback = is_loopback_host(host_of(registry));
  if (m_options.plain_http && !loopback && !m_options.insecure) {
    error = fmt::format("failed to connect to {}: refusing plain HTTP to a registry that is not on this machine "
                        "(use --insecure to allow it)", registry);
    return nullptr;
  }
  auto& state = m_registries[registry];
  state.name = registry;
  // Docker Hub's canonical name is not its API endpoint.
  state.authority = registry == "docker.io" ? "registry-1.docker.io" : registry;
  // A registry on this machine is asked in plain HTTP first: a TLS one answers that at once (400,
  // or a closed connection), where a plain server may never answer a TLS ClientHello (one that
  // reads a request line waits for a newline) and the handshake waits for the connect timeout.
  // (--ca-file says the registry speaks TLS.)
  const bool plain_first = m_options.plain_http || (loopback && m_options.ca_file.empty());
  state.base_url = (plain_first ? "http://" : "https://") + state.authority;
  state.http_allowed = loopback || m_options.insecure;
  // Where plain HTTP is not allowed, HTTPS is the only scheme: a first request that fails is retried
  // like any other (a distant registry that is down is tried again, not given up at once).
  state.scheme_known = m_options.plain_http || !state.http_allowed;
  // A token realm this registry named before: its token is asked for while the registry is
  // reached. Were it wrong, the registry's 401 teaches the right one, as without it.
  if (auto remembered = m_memory.find(state.base_url); remembered && realm_allowed(remembered->param("realm"))) {
    state.challenge = std::move(remembered);
    state.challenge_remembered = true;
  }
  return &state;
}

namespace {

// A TLS server's answer to plain HTTP: Go's "400 Client sent an HTTP request to an HTTPS server",
// nginx's "400 The plain HTTP request was sent to HTTPS port", or a closed connection.
bool speaks_tls(const Response& response) {
  // No connection, or no answer in time, says nothing about the scheme: a plain registry that is
  // down must not be taken for a TLS one for good (issue 23 F7); nor does an exchange cancelled.
  if (!response.ok()) {
    return response.failure != TransportFailure::timeout && response.failure != TransportFailure::unreachable &&
           response.failure != TransportFailure::cancelled;
  }
  // A HEAD answer has no body to read the reason from.
  return response.status == 400 &&
         (response.body.empty() || util::to_lower(response.body).find("https") != std::string::npos);
}

}  // namespace

bool Session::switch_scheme(RegistryState& state, const std::string& sent_base, const Response& response) {
  const bool plain = sent_base.starts_with("http://");
  const bool other_scheme =
      state.http_allowed && (plain ? speaks_tls(response) : response.failure == TransportFailure::tls_handshake);
  // Sent at once with a request whose answer switched the scheme: it only has to go again.
  if (sent_base != state.base_url) return other_scheme;
  const bool mismatch = !state.scheme_known && other_scheme;
  state.answered = state.answered || (response.ok() && !mismatch);
  if (state.scheme_known || !state.http_allowed) return false;
  if (!mismatch) {
    state.scheme_known = response.ok();
    return false;
  }
  // As with Docker: a loopback (or --insecure) registry speaks whichever of the two it answers.
  state.base_url = (plain ? "https://" : "http://") + state.authority;
  state.scheme_known = true;
  return true;
}

Result<std::string> Session::connect(const std::string& registry, Probe probe) {
  std::string error;
  auto* state = state_for(registry, error);
  if (state == nullptr) return std::unexpected(Error{error});
  // A registry that answered a request already told its scheme and challenge: no ping needed.
  if (probe == Probe::lazy || state->answered) return state->base_url;
  Response response;
  const auto basic = preemptive_basic(*state);
  std::string sent_base;
  do {
    std::optional<Response> out;
    sent_base = state->base_url;
    Request ping{Method::get, sent_base + "/v2/"};
    if (basic) ping.headers.push_back("Authorization: " + *basic);
    send(std::move(ping), state->scheme_known ? Retry::safe : Retry::never, 0, [&out](Response r) { out = std::move(r); });
    HWIMG_TRY(m_transport.run());
    response = std::move(*out);
  } while (switch_scheme(*state, sent_base, response));
  if (!response.ok()) return fail("failed to connect to {}: {}", registry, describe(response));
  if (response.status == 401) {
    HWIMG_TRY(learn_challenge(*state, registry, response));
    // The Basic credentials the ping carried are the ones a Basic registry just refused.
    if (basic && state->challenge->scheme == "basic") return fail("{}", auth_failure(registry, response));
  } else if (response.status == 404) {
    return fail("failed to connect to {}: {}/v2/ answered 404, it does not serve the registry API", registry,
                state->base_url);
  } else if (response.status != 200) {
    return fail("failed to connect to {}: {}", registry, describe(response));
  } else if (basic) {
    accepted_preemptively(*state);
  }
  return state->base_url;
}

void Session::send(Request request, Retry retry, unsigned attempt, std::function<void(Response)> done) {
  auto copy = retry == Retry::safe ? std::optional<Request>(request) : std::nullopt;
  m_transport.submit(std::move(request), [this, copy = std::move(copy), retry, attempt,
                                          done = std::move(done)](Response r) mutable {
    const auto attempts = r.failure == TransportFailure::unreachable && is_loopback_host(url_host(r.url))
                              ? std::min(m_options.max_attempts, max_attempts_unreachable_loopback)
                              : m_options.max_attempts;
    if (retry == Retry::safe && is_transient(r) && attempt + 1 < attempts) {
      const auto delay = backoff_delay(r, attempt, m_random);
      m_options.output->notice(retry_notice(r, attempt, attempts, delay));
      m_transport.after(delay, [this, request = std::move(*copy), retry, attempt, done = std::move(done)]() mutable {
        send(std::move(request), retry, attempt + 1, std::move(done));
      });
      return;
    }
    // The error says it was not one bad moment: "... Connection refused (tried 8 times)".
    if (attempt > 0 && !r.ok() && !r.error.empty()) r.error = fmt::format("{} (tried {} times)", r.error, attempt + 1);
    done(std::move(r));
  });
}

void Session::exchange(const std::string& registry, Request request, Scopes scopes, Retry retry, ExchangeDone done,
                       Authorization authorization) {
  if (authorization == Authorization::as_given) return attempt_as_given(registry, std::move(request), retry, std::move(done));
  attempt(registry, std::move(request), std::move(scopes), retry, std::nullopt, std::move(done), authorization);
}

void Session::attempt_as_given(const std::string& registry, Request request, Retry retry, ExchangeDone done) {
  std::string error;
  auto* found = state_for(registry, error);
  if (found == nullptr) return done(std::unexpected(Error{error}));
  auto& state = *found;
  Request sent = request;
  if (!sent.url.starts_with("http://") && !sent.url.starts_with("https://")) sent.url = state.base_url + sent.url;
  // Not retried until the scheme is known: a failure may only mean the other scheme.
  send(std::move(sent), state.scheme_known ? retry : Retry::never, 0,
       [this, &state, registry, request = std::move(request), retry, sent_base = state.base_url,
        done = std::move(done)](Response r) mutable {
    if (switch_scheme(state, sent_base, r)) return attempt_as_given(registry, std::move(request), retry, std::move(done));
    done(std::move(r));
  });
}

void Session::attempt(const std::string& registry, Request request, Scopes scopes, Retry retry,
                      std::optional<std::string> refused, ExchangeDone done, Authorization authorization) {
  std::string error;
  auto* found = state_for(registry, error);
  if (found == nullptr) return done(std::unexpected(Error{error}));
  auto& state = *found;
  with_authorization(state, scopes, refused, [this, &state, registry, request = std::move(request), scopes, retry,
                                              refused = std::move(refused), authorization,
                                              done = std::move(done)](auto header) mutable {
    if (!header) return done(std::unexpected(header.error()));
    std::optional<std::string> authorized = std::move(*header);
    const bool preemptive = authorized.has_value() && !state.challenge;
    Request sent = request;
    if (!sent.url.starts_with("http://") && !sent.url.starts_with("https://")) sent.url = state.base_url + sent.url;
    if (authorized) sent.headers.push_back("Authorization: " + *authorized);
    send(std::move(sent), state.scheme_known ? retry : Retry::never, 0,
         [this, &state, registry, request = std::move(request), scopes = std::move(scopes), retry,
          refused = std::move(refused), authorization, sent_base = state.base_url, authorized = std::move(authorized),
          preemptive, done = std::move(done)](Response r) mutable {
      if (switch_scheme(state, sent_base, r)) {
        return attempt(registry, std::move(request), std::move(scopes), retry, std::move(refused), std::move(done),
                       authorization);
      }
      // A 401 from where a redirect led (blob storage on another host) is not the registry's: its
      // challenge is never answered with the registry's credentials.
      if (r.ok() && r.status == 401 && !same_origin(r.url, state.base_url)) return done(std::move(r));
      if (r.ok() && r.status != 401 && authorized) {
        state.credentials_accepted = true;
        if (!state.challenge) accepted_preemptively(state);
      }
      if (r.ok() && r.status == 401) {
        if (!refused) {
          if (auto learned = learn_challenge(state, registry, r); !learned) return done(std::unexpected(learned.error()));
          // Basic credentials sent before the challenge were these: asking again would only be
          // refused again.
          if (!(preemptive && state.challenge->scheme == "basic")) {
            for (const auto& value : r.header_values("www-authenticate")) {
              for (const auto& c : parse_challenges(value)) {
                if (c.scheme == "bearer") scopes = merge_scopes(scopes, split_scopes(c.param("scope")));
              }
            }
            return attempt(registry, std::move(request), std::move(scopes), retry, authorized.value_or(""),
                           std::move(done), authorization);
          }
        }
        if (authorization == Authorization::session_or_challenge) return done(std::move(r));
        return done(fail("{}", auth_failure(registry, r)));
      }
      done(std::move(r));
    });
  });
}

Result<Response> Session::exchange_now(const std::string& registry, Request request, Scopes scopes, Retry retry,
                                       Authorization authorization) {
  std::optional<Result<Response>> out;
  exchange(registry, std::move(request), std::move(scopes), retry, [&out](Result<Response> r) { out = std::move(r); },
           authorization);
  HWIMG_TRY(m_transport.run());
  return std::move(*out);
}

}  // namespace hwimg::registry
