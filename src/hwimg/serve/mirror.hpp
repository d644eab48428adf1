#pragma once
// The mirror's answers (docs/serve.md): the read side of the distribution API for the configured
// upstreams, where a tag naming an hwimg multi-variant index is answered with the variant this
// node runs; everything else passes through, bodies streamed and digests verified.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "hwimg/oci/digest.hpp"
#include "hwimg/select/gpu_selection.hpp"
#include "hwimg/serve/host_state.hpp"
#include "hwimg/serve/http_server.hpp"
#include "hwimg/serve/manifest_cache.hpp"
#include "hwimg/serve/metrics.hpp"
#include "hwimg/serve/route.hpp"
#include "hwimg/serve/tag_answer.hpp"
#include "hwimg/serve/tag_cache.hpp"
#include "hwimg/serve/upstream_health.hpp"
#include "hwimg/serve/upstreams.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::serve {

struct MirrorSettings {
  std::chrono::milliseconds ttl{60'000};  // --ttl: how long a tag's answer is kept
  select::GpuSelection gpus;              // --gpus
  ForeignImages foreign = ForeignImages::pass_through;  // --foreign
};

class Mirror {
public:
  Mirror(Upstreams& upstreams, HostState& host, Metrics& metrics, util::Output& output, MirrorSettings settings,
         TagCache::Now now = std::chrono::steady_clock::now);

  // What needs no upstream and never blocks, for the server's event loop: health, metrics, the
  // ping, refusals, and tags whose answer is kept; nullopt: answer_from_upstream() answers.
  [[nodiscard]] std::optional<HttpResponse> answer_now(const HttpRequest& request);
  // The rest, on a fetch worker: may block on the upstream.
  [[nodiscard]] HttpResponse answer_from_upstream(const HttpRequest& request);
  // Either, on the caller's thread.
  [[nodiscard]] HttpResponse handle(const HttpRequest& request);
  // The server's own failures (an exception, no worker free in time) as registry errors.
  [[nodiscard]] HttpResponse failure(unsigned status, std::string_view message);
  // The three above as the server calls them.
  [[nodiscard]] Handlers handlers();
  // What /readyz answers; until this is set, ready.
  void watch_readiness(std::function<Readiness()> readiness) { m_readiness = std::move(readiness); }
  // The node's facts changed: answers kept for tags are stale.
  void forget_tags() { m_tags.clear(); }

private:
  struct Answered {
    std::string_view kind;  // the metrics' label
    HttpResponse response;
  };
  // The answer when the request needs no upstream, else its route.
  std::variant<Answered, Route> triage(const HttpRequest& request) const;
  HttpResponse answer_tag_request(const HttpRequest& request, const Route& route, const Upstream& upstream);
  HttpResponse pass_through(const HttpRequest& request, const Route& route, const Upstream& upstream);
  // A streamed upstream body as it comes, checked against `expected` when set (the digest asked for).
  BodySource verified_body(std::shared_ptr<Upstreams::Lease> lease, std::optional<oci::Digest> expected,
                           std::string upstream);
  // The tag asked of the upstream on a pooled client and judged for this node.
  Result<SharedOutcome> judge_tag(registry::Client& client, const Route& route, const Upstream& upstream,
                                  const std::optional<std::string>& authorization);
  Result<SharedOutcome> fetch_tag(const Route& route, const Upstream& upstream,
                                  const std::optional<std::string>& authorization);

  Upstreams& m_upstreams;
  HostState& m_host;
  Metrics& m_metrics;
  util::Output& m_output;
  MirrorSettings m_settings;
  TagCache m_tags;
  ManifestCache m_manifests{32 << 20};
  TagCache::Now m_now;
  std::function<Readiness()> m_readiness;
};

// {"errors": [{"code": CODE, "message": MESSAGE}]} with the distribution API's headers.
[[nodiscard]] HttpResponse registry_error(unsigned status, std::string_view code, std::string_view message);

}  // namespace hwimg::serve
