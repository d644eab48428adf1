#include "hwimg/serve/mirror.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include "hwimg/image/registry_reader.hpp"
#include "hwimg/oci/digest.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/verified_stream.hpp"
#include "hwimg/util/json_reader.hpp"

namespace hwimg::serve {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view api_version_header = "Docker-Distribution-API-Version";

// Upstream headers a client may need; hop-by-hop and length headers are the server's own.
constexpr std::array<std::string_view, 10> passed_headers{
    "content-type", "docker-content-digest", "docker-distribution-api-version", "www-authenticate", "etag",
    "link",         "content-range",         "accept-ranges",                   "last-modified",    "retry-after"};

std::string_view kind_label(RouteKind kind, bool by_digest) {
  switch (kind) {
    case RouteKind::ping: return "ping";
    case RouteKind::manifest: return by_digest ? "manifest" : "tag";
    case RouteKind::blob: return "blob";
    case RouteKind::tags: return "tags";
    case RouteKind::referrers: return "referrers";
  }
  return "other";
}

std::string api_path(const Route& route) {
  switch (route.kind) {
    case RouteKind::manifest: return "manifests/" + route.reference;
    case RouteKind::blob: return "blobs/" + route.reference;
    case RouteKind::tags: return "tags/list";
    case RouteKind::referrers: return "referrers/" + route.reference;
    case RouteKind::ping: break;
  }
  return {};
}

// A Link to the next page names the upstream's path; a client that addressed the upstream by a
// path prefix must get the prefix back.
std::string rewrite_link(std::string link, const Route& route) {
  const auto marker = "</v2/" + route.repository + "/";
  if (route.path_prefixed) {
    if (const auto at = link.find(marker); at != std::string::npos) {
      link.replace(at, marker.size(), "</v2/" + route.upstream + "/" + route.repository + "/");
    }
  }
  return link;
}

// A value with a control character (a bare CR, a NUL) is no field value (RFC 9110 §5.5), and
// libmicrohttpd refuses to send it, or an empty one: the whole answer would be dropped, the
// connection closed.
bool sendable(std::string_view value) {
  return !value.empty() &&
         std::ranges::none_of(value, [](char c) { return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f; });
}

Fields passed_on(const Fields& headers, const Route& route) {
  Fields out;
  for (const auto& [name, value] : headers) {
    if (std::ranges::find(passed_headers, name) == passed_headers.end() || !sendable(value)) continue;
    out.emplace_back(name, name == "link" ? rewrite_link(value, route) : value);
  }
  return out;
}

std::optional<std::uint64_t> content_length(const Fields& headers) {
  for (const auto& [name, value] : headers) {
    if (name != "content-length") continue;
    std::uint64_t length = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), length);
    if (error == std::errc() && end == value.data() + value.size()) return length;
  }
  return std::nullopt;
}

HttpResponse from_answer(const registry::Response& answer, const Route& route) {
  // A status outside 200-599 is no final HTTP answer (RFC 9110 §15): passed on, a client may
  // take it for anything, or reject the connection.
  if (answer.status < 200 || answer.status > 599) {
    return registry_error(503, "UNAVAILABLE",
                          fmt::format("hwimg serve: the upstream answered status {}, which is no HTTP answer",
                                      answer.status));
  }
  HttpResponse response;
  response.status = static_cast<unsigned>(answer.status);
  response.headers = passed_on(answer.headers, route);
  response.body = answer.body;
  return response;
}

HttpResponse ok(std::string body, std::string_view type) {
  HttpResponse response;
  response.headers = {{std::string(api_version_header), "registry/2.0"}, {"Content-Type", std::string(type)}};
  response.body = std::move(body);
  return response;
}

std::string key_of(const Route& route, const Upstream& upstream, const std::optional<std::string>& authorization) {
  // Answers fetched with one client's credentials are never given to another client.
  const auto who = authorization ? oci::Digest::sha256_of(*authorization).hex() : std::string("node");
  return fmt::format("{}/{}:{}\n{}", upstream.registry, route.repository, route.reference, who);
}

// The manifest request's Accept: every type, whatever the client listed (enroot first asks for
// indexes only; the answer for a tag is a manifest either way).
std::vector<std::string> manifest_headers() {
  return {registry::manifest_accept_header()};
}

// The client's request to the upstream: its Authorization (or none), its Range, and for a
// manifest the media types hwimg accepts; a successful GET's body is left to stream.
Result<registry::Response> ask_upstream(registry::Client& client, const HttpRequest& request, const Route& route,
                                      const Upstream& upstream, registry::ReadMethod method) {
  const auto authorization = request.header("authorization");
  client.forward_authorization(authorization);
  std::vector<std::string> headers = route.kind == RouteKind::manifest ? manifest_headers() : std::vector<std::string>{};
  if (const auto range = request.header("range")) headers.push_back("Range: " + *range);
  const registry::Reference reference{upstream.registry, route.repository, {}, std::nullopt};
  return client.open_stream(reference, method, api_path(route), headers);
}

// The answer for a tag from what its fetch gave.
HttpResponse respond_to(const TagOutcome& outcome, const Route& route) {
  if (outcome.upstream) return from_answer(*outcome.upstream, route);
  const auto& answer = *outcome.answer;
  if (answer.kind == TagAnswer::Kind::no_match) return registry_error(404, "MANIFEST_UNKNOWN", answer.reason);
  HttpResponse response;
  response.headers = {{std::string(api_version_header), "registry/2.0"},
                      {"Content-Type", answer.media_type},
                      {"Docker-Content-Digest", answer.digest.str()}};
  response.body = answer.bytes;
  return response;
}

}  // namespace

HttpResponse registry_error(unsigned status, std::string_view code, std::string_view message) {
  util::json::Json error{{"code", code}, {"message", message}};
  HttpResponse response;
  response.status = status;
  response.headers = {{std::string(api_version_header), "registry/2.0"}, {"Content-Type", "application/json"}};
  // The message may quote an upstream's bytes (a Content-Type, a reason), which need not be UTF-8:
  // replaced, where a strict dump would throw out of the handler.
  response.body = util::json::Json{{"errors", util::json::Json::array({error})}}.dump(
                      -1, ' ', false, util::json::Json::error_handler_t::replace) +
                  "\n";
  return response;
}

Mirror::Mirror(Upstreams& upstreams, HostState& host, Metrics& metrics, util::Output& output, MirrorSettings settings,
               TagCache::Now now)
    : m_upstreams(upstreams), m_host(host), m_metrics(metrics), m_output(output), m_settings(std::move(settings)),
      m_tags(m_settings.ttl, now), m_now(std::move(now)) {}

std::variant<Mirror::Answered, Route> Mirror::triage(const HttpRequest& request) const {
  if (request.path == "/healthz") return Answered{"health", ok("ok\n", "text/plain")};
  if (request.path == "/readyz") {
    auto readiness = m_readiness ? m_readiness() : Readiness{true, "ready\n"};
    auto response = ok(std::move(readiness.text), "text/plain");
    if (!readiness.ready) response.status = 503;
    return Answered{"health", std::move(response)};
  }
  if (request.path == "/metrics") return Answered{"metrics", ok(m_metrics.render(), Metrics::content_type)};
  if (request.method != "GET" && request.method != "HEAD") {
    auto refused = registry_error(405, "UNSUPPORTED", fmt::format("hwimg serve is a read-only mirror: {} is not "
                                                                  "supported",
                                                                  request.method));
    refused.headers.emplace_back("Allow", "GET, HEAD");
    return Answered{"other", std::move(refused)};
  }
  auto route = parse_route(request.path, request.query_value("ns"), m_upstreams.names());
  if (!route) {
    const auto& failure = route.error();
    switch (failure.error) {
      case RouteError::not_found: return Answered{"other", registry_error(404, "NAME_UNKNOWN", failure.message)};
      case RouteError::unknown_upstream: return Answered{"other", registry_error(403, "DENIED", failure.message)};
      case RouteError::invalid: return Answered{"other", registry_error(400, "NAME_INVALID", failure.message)};
    }
  }
  if (route->kind == RouteKind::ping) return Answered{"ping", ok("{}", "application/json")};
  return std::move(*route);
}

std::optional<HttpResponse> Mirror::answer_now(const HttpRequest& request) {
  auto triaged = triage(request);
  if (auto* answered = std::get_if<Answered>(&triaged)) {
    m_metrics.count_request(answered->kind, answered->response.status);
    return std::move(answered->response);
  }
  const auto& route = std::get<Route>(triaged);
  if (route.kind != RouteKind::manifest || route.by_digest()) return std::nullopt;
  const auto started = m_now();
  const auto& upstream = *m_upstreams.find(route.upstream);
  const auto kept = m_tags.find(key_of(route, upstream, request.header("authorization")));
  if (!kept) return std::nullopt;
  m_metrics.observe_resolution(m_now() - started);
  auto response = respond_to(**kept, route);
  m_metrics.count_request("tag", response.status);
  return response;
}

HttpResponse Mirror::answer_from_upstream(const HttpRequest& request) {
  auto triaged = triage(request);
  if (auto* answered = std::get_if<Answered>(&triaged)) return std::move(answered->response);
  const auto& route = std::get<Route>(triaged);
  const auto kind = kind_label(route.kind, route.by_digest());
  const auto& upstream = *m_upstreams.find(route.upstream);
  auto response = route.kind == RouteKind::manifest && !route.by_digest() ? answer_tag_request(request, route, upstream)
                                                                           : pass_through(request, route, upstream);
  m_metrics.count_request(kind, response.status);
  return response;
}

HttpResponse Mirror::handle(const HttpRequest& request) {
  if (auto now = answer_now(request)) return std::move(*now);
  return answer_from_upstream(request);
}

HttpResponse Mirror::failure(unsigned status, std::string_view message) {
  m_metrics.count_request("other", status);
  return registry_error(status, status == 503 ? "UNAVAILABLE" : "UNKNOWN", fmt::format("hwimg serve: {}", message));
}

Handlers Mirror::handlers() {
  return {[this](const HttpRequest& request) { return answer_now(request); },
          [this](const HttpRequest& request) { return answer_from_upstream(request); },
          [this](unsigned status, std::string_view message) { return failure(status, message); }};
}

Result<SharedOutcome> Mirror::fetch_tag(const Route& route, const Upstream& upstream,
                                        const std::optional<std::string>& authorization) {
  HWIMG_TRY_ASSIGN(auto lease, m_upstreams.lease(upstream));
  auto outcome = judge_tag(lease->client(), route, upstream, authorization);
  // A client whose exchange failed may have given up mid-transfer, or learnt something wrong
  // about the upstream from a broken answer: pooled again, it would fail the next request too.
  if (!outcome) lease->discard();
  return outcome;
}

Result<SharedOutcome> Mirror::judge_tag(registry::Client& client, const Route& route, const Upstream& upstream,
                                        const std::optional<std::string>& authorization) {
  const auto started = m_now();
  const auto image = fmt::format("{}/{}:{}", upstream.registry, route.repository, route.reference);
  client.forward_authorization(authorization);
  registry::Reference reference{upstream.registry, route.repository, route.reference, std::nullopt};
  HWIMG_TRY_ASSIGN(auto answer, client.forward(reference, registry::ReadMethod::get, api_path(route),
                                                manifest_headers(), oci::max_manifest_size));
  TagOutcome outcome;
  // Any other success (a 203, a 206) is no answer to pass on as it is: its body is judged, and
  // refused, as a 200's would be.
  if (answer.status < 200 || answer.status > 299) {
    m_output.progress(fmt::format("{}: upstream answered {}", image, answer.status));
    outcome.upstream = std::move(answer);
    return std::make_shared<const TagOutcome>(std::move(outcome));
  }
  HWIMG_TRY_ASSIGN(const auto document, registry::manifest_from_answer(answer, reference));
  image::RegistryReader reader(client, reference);
  reader.remember(document);
  const auto cache_key = [&](const oci::Digest& digest) {
    return fmt::format("{}/{}@{}", upstream.registry, route.repository, digest.str());
  };
  if (oci::media_type::is_index(document.media_type)) {
    if (const auto index = oci::parse_index(document.bytes)) {
      for (const auto& entry : index->manifests) {
        if (auto bytes = m_manifests.find(cache_key(entry.digest))) {
          reader.remember({std::move(*bytes), entry.media_type, entry.digest});
        }
      }
    }
  }
  const auto facts = m_host.facts();
  HWIMG_TRY_ASSIGN(auto judged, answer_tag(document, image, reader, *facts, m_settings.gpus, m_settings.foreign));
  if (judged.kind == TagAnswer::Kind::variant) m_manifests.keep(cache_key(judged.digest), judged.bytes);
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(m_now() - started).count();
  switch (judged.kind) {
    case TagAnswer::Kind::variant:
      m_metrics.count_selection(judged.variant);
      m_output.progress(fmt::format("{} -> variant {} {} ({} ms)", image, judged.variant, judged.digest.str(), elapsed));
      break;
    case TagAnswer::Kind::unchanged:
      m_output.progress(fmt::format("{} -> {} {}, {} ({} ms)", image, judged.media_type, judged.digest.str(),
                                    m_settings.foreign == ForeignImages::select && judged.explanation.size() > 0
                                        ? "not an hwimg index; it runs on this node: passed through"
                                        : "not an hwimg index: passed through",
                                    elapsed));
      break;
    case TagAnswer::Kind::no_match:
      m_metrics.count_selection("(none)");
      m_output.progress(fmt::format("{} -> no variant runs on this node ({} ms)\n{}", image, elapsed,
                                    judged.explanation));
      break;
  }
  outcome.answer = std::move(judged);
  return std::make_shared<const TagOutcome>(std::move(outcome));
}

HttpResponse Mirror::answer_tag_request(const HttpRequest& request, const Route& route, const Upstream& upstream) {
  const auto started = m_now();
  const auto authorization = request.header("authorization");
  auto outcome = m_tags.get(key_of(route, upstream, authorization),
                            [&] { return fetch_tag(route, upstream, authorization); });
  m_metrics.observe_resolution(m_now() - started);
  if (!outcome) {
    m_metrics.count_upstream_error(upstream.registry);
    m_output.warning(outcome.error().message);
    return registry_error(503, "UNAVAILABLE", fmt::format("hwimg serve: {}", outcome.error().message));
  }
  return respond_to(**outcome, route);
}

HttpResponse Mirror::pass_through(const HttpRequest& request, const Route& route, const Upstream& upstream) {
  auto leased = m_upstreams.lease(upstream);
  if (!leased) return registry_error(503, "UNAVAILABLE", fmt::format("hwimg serve: {}", leased.error().message));
  auto lease = std::move(*leased);
  const auto method = request.method == "HEAD" ? registry::ReadMethod::head : registry::ReadMethod::get;
  auto answer = ask_upstream(lease->client(), request, route, upstream, method);
  if (!answer) {
    lease->discard();
    m_metrics.count_upstream_error(upstream.registry);
    m_output.warning(answer.error().message);
    return registry_error(503, "UNAVAILABLE", fmt::format("hwimg serve: {}", answer.error().message));
  }
  const bool success = answer->status >= 200 && answer->status < 300;
  const bool by_digest = route.kind == RouteKind::blob || (route.kind == RouteKind::manifest && route.by_digest());
  // What is sent for a digest is that digest's, whatever the upstream says: an upstream naming
  // another is broken (or lying), and a client that trusted the header would take its word.
  if (const auto claimed = util::field_value(answer->headers, "docker-content-digest");
      success && by_digest && claimed && *claimed != route.reference) {
    lease->discard();
    m_metrics.count_upstream_error(upstream.registry);
    const auto message = fmt::format("{} answered {} for {}", upstream.registry, *claimed, route.reference);
    m_output.warning(message);
    return registry_error(503, "UNAVAILABLE", fmt::format("hwimg serve: {}", message));
  }
  auto response = from_answer(*answer, route);
  if (method == registry::ReadMethod::head && success) {
    // A HEAD answer's Content-Length is the object's size (containerd sizes the descriptor by it).
    // Without one, an empty stream would be sent chunked, and libmicrohttpd ends even a HEAD
    // answer's chunked body, which the client then reads as the start of its next answer: a blob
    // or manifest has a size to say (distribution spec), anything else is answered without.
    const auto size = content_length(answer->headers);
    if (!size && by_digest) {
      lease->discard();
      m_metrics.count_upstream_error(upstream.registry);
      const auto message = fmt::format("{} answered HEAD of {} without a Content-Length", upstream.registry,
                                       route.reference);
      m_output.warning(message);
      return registry_error(503, "UNAVAILABLE", fmt::format("hwimg serve: {}", message));
    }
    if (size) {
      response.stream = [] { return Result<std::optional<std::string>>(std::nullopt); };
      response.stream_size = size;
    }
  }
  std::optional<oci::Digest> expected;
  // Every success is checked (a 203's body is no less the digest's), but for the part of a body
  // a client asked for with Range, which no digest covers.
  const bool part = answer->status == 206 && request.header("range");
  if (success && by_digest && !part && method == registry::ReadMethod::get) {
    expected = oci::Digest::parse(route.reference).value();
  }
  if (!answer->streamed) {
    // A body that came whole (a small one, or one whose transfer ended before it was streamed)
    // is checked whole.
    if (const auto actual = oci::Digest::sha256_of(answer->body); expected && actual != *expected) {
      m_metrics.count_upstream_error(upstream.registry);
      const auto message = fmt::format("{} answered content that hashes to {} for {}", upstream.registry,
                                       actual.str(), expected->str());
      m_output.warning(message);
      return registry_error(503, "UNAVAILABLE", fmt::format("hwimg serve: {}", message));
    }
    return response;
  }
  response.stream_size = content_length(answer->headers);
  response.stream = verified_body(std::move(lease), expected, upstream.registry);
  return response;
}

BodySource Mirror::verified_body(std::shared_ptr<Upstreams::Lease> lease, std::optional<oci::Digest> expected,
                                 std::string upstream) {
  struct Stream {
    std::shared_ptr<Upstreams::Lease> lease;
    std::optional<registry::VerifiedStream> verified;
    bool finished = false;
    // A client that went away leaves the upstream transfer half read: that client is not reused.
    ~Stream() {
      if (!finished) lease->discard();
    }
  };
  auto stream = std::make_shared<Stream>();
  stream->lease = std::move(lease);
  // A body fetched by digest is cut short, before its last piece, when it is not that digest's.
  if (expected) {
    stream->verified.emplace([lease = stream->lease.get()] { return lease->client().next_chunk(); }, *expected);
  }
  return [this, stream, upstream = std::move(upstream)]() -> Result<std::optional<std::string>> {
    auto piece = stream->verified ? stream->verified->next() : stream->lease->client().next_chunk();
    if (!piece) {
      stream->lease->discard();
      stream->finished = true;
      m_metrics.count_upstream_error(upstream);
      m_output.warning(fmt::format("{}: {}; the body was cut off", upstream, piece.error().message));
      return piece;
    }
    if (!*piece) stream->finished = true;
    return piece;
  };
}

}  // namespace hwimg::serve
