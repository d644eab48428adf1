#include "hwimg/registry/client.hpp"

#include <algorithm>
#include <charconv>
#include <deque>
#include <set>


#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/detail/push.hpp"
#include "hwimg/registry/detail/retry.hpp"
#include "hwimg/registry/detail/session.hpp"
#include "hwimg/registry/missing_tag.hpp"
#include "hwimg/util/strings.hpp"
#include "hwimg/util/json_reader.hpp"

namespace hwimg::registry {
namespace {

using json = nlohmann::json;

std::string bare_type(std::string_view content_type) {
  return util::to_lower(util::trim(content_type.substr(0, content_type.find(';'))));
}

// GET of the manifest the reference names, every manifest type accepted, its size bounded.
Request manifest_request(const Reference& ref) {
  Request request{Method::get, fmt::format("/v2/{}/manifests/{}", ref.repository, ref.manifest_reference())};
  request.headers.push_back(manifest_accept_header());
  request.max_response_body = oci::max_manifest_size;
  return request;
}

}  // namespace

// A stream's transfer pauses once this much of its body waits for next_chunk(): the rest stays in
// the socket, so that a reader slower than the sender (serve relaying to a slow node) slows the
// sender instead of filling memory (docs/compatibility.md#registry-api).
constexpr std::size_t max_read_ahead = 256 * 1024;

// The body of an open stream as it arrives, and how its exchange ended.
struct StreamState {
  std::deque<std::string> chunks;
  std::size_t queued = 0;                 // bytes in `chunks`
  bool abandoned = false;                 // another stream was opened: this one's transfer ends
  std::optional<Response> started;        // status and headers once a streamed body begins
  std::optional<Result<Response>> end;  // set when the exchange is over
};

struct Client::Impl {
  std::unique_ptr<Session> session;
  std::optional<std::string> forwarded;  // a mirror's client's Authorization header
  std::shared_ptr<StreamState> stream;

  Result<void> connect(const Reference& ref) {
    HWIMG_TRY(session->connect(ref.registry, Probe::lazy));
    return {};
  }
  Scopes pull(const Reference& ref) const { return {repository_scope(ref.repository, "pull")}; }
  Scopes push(const Reference& ref) const { return {repository_scope(ref.repository, "pull,push")}; }

  // The request with the forwarded Authorization, when a mirror set one; `fallback` otherwise.
  Authorization authorize(Request& request, Authorization fallback = Authorization::session) const {
    if (!forwarded) return fallback;
    request.headers.push_back("Authorization: " + *forwarded);
    return Authorization::as_given;
  }
  Result<Response> exchange_now(const Reference& ref, Request request, const Scopes& scopes) {
    const auto authorization = authorize(request);
    return session->exchange_now(ref.registry, std::move(request), scopes, Retry::safe, authorization);
  }
  Result<std::optional<std::int64_t>> head_blob(const Reference& ref, const oci::Digest& digest, const Scopes& scopes);

  // The registry's /v2/ pinged (learning its scheme and auth challenge), then asked with the
  // credentials it takes: 200, or why not ("failed to <what>: ...").
  Result<void> reach(const std::string& registry, const std::string& what) {
    HWIMG_TRY(session->connect(registry, Probe::ping));
    HWIMG_TRY(expect_status(session->exchange_now(registry, Request{Method::get, "/v2/"}, {}, Retry::safe), {200}, what));
    return {};
  }

  // The registry's catalogue (GET /v2/_catalog, distribution's extension, which registries may
  // refuse or leave out) when it fits one page of 1000 names; nullopt where it does not answer
  // with one, or has more.
  std::optional<std::vector<std::string>> catalogue(const Reference& ref) {
    Request request{Method::get, "/v2/_catalog?n=1000"};
    request.max_response_body = std::size_t{4} << 20;
    const auto response = exchange_now(ref, std::move(request), {"registry:catalog:*"});
    if (!response || !response->ok() || response->status != 200 || !next_page_link(*response).empty()) {
      return std::nullopt;
    }
    const auto body = util::json::parse_object(response->body);
    if (!body || !body->contains("repositories") || !(*body)["repositories"].is_array()) return std::nullopt;
    std::vector<std::string> names;
    for (const auto& name : (*body)["repositories"]) {
      if (auto text = util::json::as_string(name)) names.push_back(std::move(*text));
    }
    return names;
  }
};

Request read_request(const Reference& ref, ReadMethod method, std::string_view path,
                     const std::vector<std::string>& headers) {
  Request request{method == ReadMethod::head ? Method::head : Method::get,
                  fmt::format("/v2/{}/{}", ref.repository, path)};
  request.headers = headers;
  request.follow_redirects = true;
  return request;
}

Client::Client(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

Result<Client> Client::create(ClientOptions options) {
  auto impl = std::make_unique<Impl>();
  HWIMG_TRY_ASSIGN(impl->session, Session::create(std::move(options)));
  return Client(std::move(impl));
}

std::uint64_t Client::requests() const { return m_impl->session->transport().exchanges(); }

Result<FetchedManifest> manifest_from_answer(const Response& answer, const Reference& ref) {
  const auto what = fmt::format("get manifest {}", ref.str());
  if (answer.status != 200) return fail("failed to {}: {}", what, describe(answer));
  FetchedManifest out;
  out.bytes = answer.body;
  out.digest = oci::Digest::sha256_of(out.bytes);
  if (ref.digest && *ref.digest != out.digest) {
    return fail("failed to {}: wrong digest: asked for {}, the registry answered content that hashes to {}", what,
                ref.digest->str(), out.digest.str());
  }
  if (const auto served = answer.header("docker-content-digest");
      served && served->starts_with("sha256:") && *served != out.digest.str()) {
    return fail("failed to {}: wrong digest: Docker-Content-Digest says {} but the content hashes to {}", what,
                *served, out.digest.str());
  }
  auto body_type = oci::sniff_media_type(out.bytes);
  if (!body_type) return fail("failed to {}: invalid JSON: {}", what, body_type.error().message);
  const auto header_type = bare_type(answer.header("content-type").value_or(""));
  const bool generic = header_type.empty() || header_type == "application/json" ||
                       header_type == "application/octet-stream" || header_type == "text/plain";
  out.media_type = generic ? *body_type : header_type;
  if (!oci::media_type::is_index(out.media_type) && !oci::media_type::is_manifest(out.media_type)) {
    return fail("failed to {}: unknown media type \"{}\" (expected an OCI or Docker manifest or index)", what,
                out.media_type);
  }
  if (!body_type->empty() && *body_type != out.media_type) {
    return fail("failed to {}: the document says mediaType \"{}\" but was served as \"{}\"", what, *body_type,
                out.media_type);
  }
  return out;
}

Result<FetchedManifest> Client::get_manifest(const Reference& ref) {
  const auto what = fmt::format("get manifest {}", ref.str());
  HWIMG_TRY(with_context(m_impl->connect(ref), "failed to " + what));
  HWIMG_TRY_ASSIGN(auto answer, with_context(m_impl->exchange_now(ref, manifest_request(ref), m_impl->pull(ref)),
                                             "failed to " + what));
  if (answer.ok() && answer.status == 404) {
    // A missing tag is answered with the tags there are, a missing repository with the nearest names
    // in the catalogue, where the registry lists them.
    // Distribution answers MANIFEST_UNKNOWN for both; only its tag list says NAME_UNKNOWN.
    const auto codes = error_codes(answer);
    bool no_repository = std::ranges::find(codes, "NAME_UNKNOWN") != codes.end();
    if (!no_repository && !ref.digest && !ref.tag.empty()) {
      const auto tags = list_tags(ref);
      if (tags && std::ranges::find(*tags, ref.tag) == tags->end()) {
        return fail("failed to {}: {}", what, missing_tag_message(ref.tag, ref.name(), describe_status(answer), *tags));
      }
      no_repository = !tags;
    }
    if (no_repository) {
      // Said only where the catalogue is complete and does not name the repository.
      const auto names = m_impl->catalogue(ref);
      if (names && std::ranges::find(*names, ref.repository) == names->end()) {
        return fail("failed to {}: {}", what,
                    missing_repository_message(ref.registry, ref.repository, describe_status(answer), *names));
      }
    }
  }
  HWIMG_TRY_ASSIGN(auto answered, expect_status(std::move(answer), {200}, what));
  return manifest_from_answer(answered, ref);
}

Result<std::vector<FetchedManifest>> Client::get_manifests(const std::vector<Reference>& refs) {
  std::vector<FetchedManifest> out;
  if (refs.empty()) return out;
  std::vector<std::string> paths;
  for (const auto& ref : refs) paths.push_back("manifests/" + ref.manifest_reference());
  const auto request = manifest_request(refs.front());
  HWIMG_TRY_ASSIGN(const auto answers, forward_all(refs.front(), ReadMethod::get, paths, request.headers,
                                                   request.max_response_body));
  for (std::size_t i = 0; i < refs.size(); ++i) {
    HWIMG_TRY_ASSIGN(auto manifest, manifest_from_answer(answers[i], refs[i]));
    out.push_back(std::move(manifest));
  }
  return out;
}

Result<oci::Digest> Client::put_manifest(const Reference& ref, std::string_view bytes, std::string_view media_type) {
  const auto what = fmt::format("put manifest {}", ref.str());
  if (bytes.size() > oci::max_manifest_size) {
    return fail("failed to {}: it is larger than the {} MiB limit", what, oci::max_manifest_size >> 20);
  }
  HWIMG_TRY(with_context(m_impl->connect(ref), "failed to " + what));
  Request request{Method::put, fmt::format("/v2/{}/manifests/{}", ref.repository, ref.manifest_reference())};
  request.headers.push_back(fmt::format("Content-Type: {}", media_type));
  request.body = std::string(bytes);
  HWIMG_TRY_ASSIGN(const auto response,
                   expect_status(m_impl->exchange_now(ref, std::move(request), m_impl->push(ref)), {201}, what));
  const auto digest = oci::Digest::sha256_of(bytes);
  if (const auto served = response.header("docker-content-digest"); served && *served != digest.str()) {
    return fail("failed to {}: the registry stored it as {} but its bytes hash to {}", what, *served, digest.str());
  }
  return digest;
}

Result<std::optional<std::int64_t>> Client::head_blob(const Reference& ref, const oci::Digest& digest) {
  return m_impl->head_blob(ref, digest, m_impl->pull(ref));
}

Result<std::optional<std::int64_t>> Client::Impl::head_blob(const Reference& ref, const oci::Digest& digest,
                                                            const Scopes& scopes) {
  const auto what = fmt::format("check blob {} in {}", digest.str(), ref.name());
  HWIMG_TRY(with_context(connect(ref), "failed to " + what));
  Request request{Method::head, fmt::format("/v2/{}/blobs/{}", ref.repository, digest.str())};
  request.follow_redirects = true;
  HWIMG_TRY_ASSIGN(const auto response, expect_status(exchange_now(ref, std::move(request), scopes), {200, 404}, what));
  if (response.status == 404) return std::optional<std::int64_t>();
  const auto length = response.header("content-length").value_or("0");
  std::int64_t size = 0;
  const auto [end, error] = std::from_chars(length.data(), length.data() + length.size(), size);
  if (error != std::errc() || end != length.data() + length.size() || size < 0) {
    return fail("failed to {}: the registry answered an invalid Content-Length", what);
  }
  return std::optional<std::int64_t>(size);
}

Result<std::string> Client::get_blob(const Reference& ref, const oci::Digest& digest, std::size_t max_size) {
  const auto what = fmt::format("get blob {} from {}", digest.str(), ref.name());
  HWIMG_TRY(with_context(m_impl->connect(ref), "failed to " + what));
  Request request{Method::get, fmt::format("/v2/{}/blobs/{}", ref.repository, digest.str())};
  request.follow_redirects = true;
  request.max_response_body = max_size;
  HWIMG_TRY_ASSIGN(auto response,
                   expect_status(m_impl->exchange_now(ref, std::move(request), m_impl->pull(ref)), {200}, what));
  if (const auto actual = oci::Digest::sha256_of(response.body); actual != digest) {
    return fail("failed to {}: wrong digest: the content hashes to {}", what, actual.str());
  }
  return std::move(response.body);
}

Result<std::vector<std::string>> Client::list_tags(const Reference& ref, std::optional<std::size_t> page_size,
                                                   TagPages pages) {
  const auto what = fmt::format("list tags of {}", ref.name());
  HWIMG_TRY(with_context(m_impl->connect(ref), "failed to " + what));
  std::set<std::string> tags;
  std::string url = fmt::format("/v2/{}/tags/list", ref.repository);
  if (page_size) url += fmt::format("?n={}", *page_size);
  // Bounded, in case a registry keeps answering with the same Link.
  const int page_limit = pages == TagPages::first ? 1 : 10'000;
  for (int page = 0; page < page_limit && !url.empty(); ++page) {
    Request request{Method::get, url};
    request.max_response_body = std::size_t{16} << 20;
    HWIMG_TRY_ASSIGN(const auto response,
                     expect_status(m_impl->exchange_now(ref, std::move(request), m_impl->pull(ref)), {200}, what));
    const auto body = util::json::parse_object(response.body).value_or(json::object());
    if (!(body.contains("tags") && (body["tags"].is_array() || body["tags"].is_null()))) {
      return fail("failed to {}: invalid JSON answer (expected {{\"name\", \"tags\": [...]}})", what);
    }
    if (body["tags"].is_array()) {
      for (const auto& tag : body["tags"]) {
        if (auto name = util::json::as_string(tag)) tags.insert(std::move(*name));
      }
    }
    const auto next = next_page_link(response);
    url = next.empty() ? std::string() : resolve_url(response.url, next);
  }
  return std::vector<std::string>(tags.begin(), tags.end());
}

Result<oci::Digest> Client::delete_manifest(const Reference& ref) {
  const auto what = fmt::format("delete {}", ref.str());
  auto digest = ref.digest;
  if (!digest) {
    // Resolved here rather than by get_manifest, so a missing tag is one line: "no such tag (HTTP 404 ...)".
    HWIMG_TRY(with_context(m_impl->connect(ref), "failed to " + what));
    HWIMG_TRY_ASSIGN(auto resolved, with_context(m_impl->exchange_now(ref, manifest_request(ref), m_impl->pull(ref)),
                                                 "failed to " + what));
    if (resolved.ok() && resolved.status == 404) return fail("failed to {}: no such tag ({})", what, describe(resolved));
    HWIMG_TRY_ASSIGN(auto answered, expect_status(std::move(resolved), {200}, what));
    HWIMG_TRY_ASSIGN(const auto manifest,
                     with_context(manifest_from_answer(answered, ref), "failed to " + what));
    digest = manifest.digest;
  }
  Request request{Method::del, fmt::format("/v2/{}/manifests/{}", ref.repository, digest->str())};
  HWIMG_TRY_ASSIGN(const auto response, m_impl->exchange_now(ref, std::move(request), m_impl->push(ref)));
  if (response.status == 202) return *digest;
  if (response.ok() && response.status == 404) {
    return fail("failed to {}: no such manifest ({})", what, describe(response));
  }
  // Distribution answers 405 UNSUPPORTED unless storage.delete.enabled is set
  // (docs/compatibility.md#deleting-manifests).
  const auto hint = response.status == 405 ? " (the registry does not allow deletes; a distribution registry needs "
                                             "storage.delete.enabled: true, REGISTRY_STORAGE_DELETE_ENABLED=true)"
                                           : "";
  return fail("failed to {}: {}{}", what, describe(response), hint);
}

Result<Response> Client::delete_reference(const Reference& ref) {
  HWIMG_TRY(with_context(m_impl->connect(ref), fmt::format("failed to delete {}", ref.str())));
  Request request{Method::del, fmt::format("/v2/{}/manifests/{}", ref.repository, ref.manifest_reference())};
  HWIMG_TRY_ASSIGN(auto response, with_context(m_impl->exchange_now(ref, std::move(request), m_impl->push(ref)),
                                               fmt::format("failed to delete {}", ref.str())));
  if (!response.ok()) return fail("failed to delete {}: {}", ref.str(), describe(response));
  return response;
}

Result<PushSummary> Client::push_plan(PushPlan plan, const Reference& destination, const ExternalBlobs& external) {
  return registry::push_plan(*m_impl->session, std::move(plan), destination, external);
}

Result<oci::Digest> Client::tag(const Reference& source, const std::vector<std::string>& new_tags) {
  for (const auto& t : new_tags) {
    HWIMG_TRY(validate_registry_tag(t));
  }
  HWIMG_TRY_ASSIGN(const auto manifest, get_manifest(source));
  for (const auto& t : new_tags) {
    HWIMG_TRY(put_manifest(source.with_tag(t), manifest.bytes, manifest.media_type));
  }
  return manifest.digest;
}

Result<void> Client::check_registry(const std::string& registry) {
  return m_impl->reach(registry, fmt::format("use {}", registry));
}

Result<void> Client::check_login(const std::string& registry, const Credentials& credentials) {
  m_impl->session->use_credentials(registry, credentials);
  return m_impl->reach(registry, fmt::format("log in to {}", registry));
}

void Client::forward_authorization(std::optional<std::string> header) {
  m_impl->forwarded = std::move(header);
}

Result<Response> Client::forward(const Reference& ref, ReadMethod method, std::string_view path,
                               const std::vector<std::string>& headers, std::size_t max_body) {
  HWIMG_TRY_ASSIGN(auto answers, forward_all(ref, method, {std::string(path)}, headers, max_body));
  return std::move(answers.front());
}

Result<std::vector<Response>> Client::forward_all(const Reference& ref, ReadMethod method,
                                                const std::vector<std::string>& paths,
                                                const std::vector<std::string>& headers, std::size_t max_body) {
  if (paths.empty()) return std::vector<Response>{};
  HWIMG_TRY(with_context(m_impl->connect(ref), fmt::format("failed to read {}/{}", ref.name(), paths.front())));
  std::vector<std::optional<Result<Response>>> results(paths.size());
  std::size_t answered = 0;
  const auto send = [&](std::size_t i) {
    auto request = read_request(ref, method, paths[i], headers);
    request.max_response_body = max_body;
    const auto authorization = m_impl->authorize(request, Authorization::session_or_challenge);
    m_impl->session->exchange(ref.registry, std::move(request), m_impl->pull(ref), Retry::safe,
                              [&results, &answered, i](Result<Response> r) {
                                results[i] = std::move(r);
                                ++answered;
                              },
                              authorization);
  };
  for (std::size_t i = 0; i < paths.size(); ++i) send(i);
  HWIMG_TRY(m_impl->session->transport().run_until([&] { return answered == paths.size(); }));
  std::vector<Response> out;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const auto what = fmt::format("read {}/{}", ref.name(), paths[i]);
    if (!results[i]) return fail("failed to {}: the exchange ended without an answer", what);
    HWIMG_TRY_ASSIGN(auto response, std::move(*results[i]));
    if (!response.ok()) return fail("failed to {}: {}", what, describe(response));
    out.push_back(std::move(response));
  }
  return out;
}

Result<Response> Client::open_stream(const Reference& ref, ReadMethod method, std::string_view path,
                                   const std::vector<std::string>& headers) {
  const auto what = fmt::format("read {}/{}", ref.name(), path);
  HWIMG_TRY(with_context(m_impl->connect(ref), "failed to " + what));
  auto state = std::make_shared<StreamState>();
  if (m_impl->stream) m_impl->stream->abandoned = true;
  m_impl->stream = state;
  auto request = read_request(ref, method, path, headers);
  request.on_response_start = [state](const Response& r) {
    if (r.status < 200 || r.status > 299) return false;
    state->started = r;
    state->started->streamed = true;
    return true;
  };
  request.on_body_data = [weak = std::weak_ptr<StreamState>(state)](std::string_view data) {
    const auto alive = weak.lock();
    if (!alive || alive->abandoned) return BodyIntake::stop;
    if (alive->queued >= max_read_ahead) return BodyIntake::full;
    alive->chunks.emplace_back(data);
    alive->queued += data.size();
    return BodyIntake::taken;
  };
  const auto authorization = m_impl->authorize(request, Authorization::session_or_challenge);
  // Never retried: a body already passed on cannot be taken back.
  m_impl->session->exchange(ref.registry, std::move(request), m_impl->pull(ref), Retry::never,
                            [state](Result<Response> r) { state->end = std::move(r); }, authorization);
  HWIMG_TRY(m_impl->session->transport().run_until([&] { return state->started || state->end; }));
  if (state->started) return *state->started;
  if (!state->end) return fail("failed to {}: the exchange ended without an answer", what);
  HWIMG_TRY_ASSIGN(auto response, std::move(*state->end));
  if (!response.ok()) return fail("failed to {}: {}", what, describe(response));
  return response;
}

Result<std::optional<std::string>> Client::next_chunk() {
  const auto state = m_impl->stream;
  if (!state) return std::optional<std::string>();
  auto& transport = m_impl->session->transport();
  // Read on only once everything read ahead was taken (a piece held back may arrive right here).
  if (state->chunks.empty()) transport.resume_bodies();
  HWIMG_TRY(transport.run_until([&] { return !state->chunks.empty() || state->end; }));
  if (!state->chunks.empty()) {
    auto chunk = std::move(state->chunks.front());
    state->chunks.pop_front();
    state->queued -= chunk.size();
    return std::optional<std::string>(std::move(chunk));
  }
  if (!state->end) return fail("failed to read a streamed body: the exchange stopped");
  if (!*state->end) return std::unexpected(state->end->error());
  if (!(*state->end)->ok()) return fail("failed to read a streamed body: {}", describe(**state->end));
  return std::optional<std::string>();
}

std::size_t Client::read_ahead() const {
  return m_impl->stream ? m_impl->stream->queued : 0;
}

}  // namespace hwimg::registry
