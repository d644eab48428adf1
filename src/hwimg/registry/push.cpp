#include "hwimg/registry/detail/push.hpp"

#include "hwimg/registry/detail/pusher.hpp"

namespace hwimg::registry {

Result<PushSummary> Pusher::run() {
  const auto& registry = m_destination.registry;
  // No ping: the checks go at once, and the registry's scheme and challenge are learned from
  // their answers (one token fetched for all of them).
  HWIMG_TRY(m_session.connect(registry, Probe::lazy));
  const auto sources = make_jobs();
  m_scopes = {repository_scope(m_destination.repository, "pull,push")};
  for (const auto& source : sources) m_scopes.push_back(repository_scope(source, "pull"));

  start_checks();
  HWIMG_TRY(finish_phase());

  for (const auto& m : m_plan.manifests) queue_manifest(m);
  for (auto& [subject, group] : m_subjects) queue_referrers(group);
  start_manifests();
  HWIMG_TRY(finish_phase());

  queue_manifest(m_plan.root);
  start_manifests();
  for (auto& [subject, group] : m_subjects) {
    if (!group.to_list.empty()) list_referrers(group);
  }
  HWIMG_TRY(finish_phase());

  for (const auto& blob : m_plan.blobs) m_locations.record(registry, blob.digest, m_destination.repository);
  if (auto r = m_locations.save(); !r) {
    m_output.log(fmt::format("could not remember blob locations: {}", r.error().message));
  }
  m_summary.digest = m_plan.root.descriptor.digest;
  m_summary.reference = m_destination.with_tag(m_plan.root.tag).str();
  m_summary.requests = m_session.transport().exchanges();
  return m_summary;
}

std::set<std::string> Pusher::make_jobs() {
  const auto& registry = m_destination.registry;
  std::set<std::string> sources;
  for (const auto& blob : m_plan.blobs) {
    auto& job = m_jobs.emplace_back();
    m_job_of[blob.digest] = &job;
    job.blob = blob;
    if (const auto made = m_plan.inline_blobs.find(blob.digest); made != m_plan.inline_blobs.end()) {
      job.in_memory = &made->second;
    }
    job.mount_from = m_locations.other_repository(registry, blob.digest, m_destination.repository);
    if (const auto found = m_external.find(blob.digest); found != m_external.end()) {
      job.external = found->second;
      // A blob of another repository of this registry is mounted, whatever else is known.
      if (found->second.registry == registry) job.mount_from = found->second.repository;
    }
    if (job.mount_from && (sources.contains(*job.mount_from) || sources.size() < max_mount_sources ||
                           job.external)) {
      sources.insert(*job.mount_from);
    } else {
      job.mount_from.reset();
    }
  }
  return sources;
}

void Pusher::start_checks() {
  const auto& registry = m_destination.registry;
  // Every HEAD goes at once (they are cheap and multiplexed); uploads take the -j slots. The
  // manifests are checked in the same round, so an unchanged re-push writes nothing.
  for (auto& job : m_jobs) {
    // A blob another repository of this registry holds (or is remembered to hold) is mounted at
    // once: a mount of a blob the repository has already succeeds too, and a failed one opens the
    // upload session the upload needs, so asking first would only add a round trip.
    if (job.mount_from && !(job.external && job.external->repository == m_destination.repository)) {
      m_pending_blobs.push_back(&job);
    } else if (job.in_memory && !m_locations.holds(registry, job.blob.digest, m_destination.repository)) {
      // A few bytes made here: sending them costs what asking whether they are there would.
      m_pending_blobs.push_back(&job);
    } else {
      check_blob(job);
    }
  }
  start_uploads();
  for (const auto& referrer : m_plan.referrers) group_referrer(referrer);
  // Read in this round whether the subjects are there yet or not (a registry takes a referrer
  // before its subject): an unchanged push then needs no round after the checks.
  for (auto& [subject, group] : m_subjects) check_referrers(group);
  for (const auto& m : m_plan.manifests) check_manifest(m);
  check_manifest(m_plan.root);
}

std::string Pusher::blob_url(const oci::Digest& digest) const {
  return fmt::format("/v2/{}/blobs/{}", m_destination.repository, digest.str());
}

Result<void> Pusher::finish_phase() {
  auto r = m_session.transport().run();
  clear_progress();
  if (!r) return r;
  if (m_error) return std::unexpected(*m_error);
  return {};
}

void Pusher::fail_with(Error error) {
  if (!m_error) m_error = std::move(error);
}

void Pusher::exchange(Request request, Retry retry, std::function<void(Response)> on_response) {
  m_session.exchange(m_destination.registry, std::move(request), m_scopes, retry,
                     [this, on_response = std::move(on_response)](Result<Response> r) {
                       if (!r) return fail_with(r.error());
                       on_response(std::move(*r));
                     });
}

void Pusher::show_progress() {
  const auto now = std::chrono::steady_clock::now();
  if (now - m_last_progress < std::chrono::milliseconds(100)) return;
  m_last_progress = now;
  m_output.status(fmt::format("pushing {}: blobs {}/{}, {:.1f} MiB sent", m_destination.name(), m_blobs_done,
                              m_jobs.size(), static_cast<double>(m_bytes_read) / (1 << 20)));
}

Result<PushSummary> push_plan(Session& session, PushPlan plan, const Reference& destination,
                              const ExternalBlobs& external) {
  auto locations = BlobLocations::load(plan.layout.empty() ? std::filesystem::path()
                                                           : plan.layout / ".hwimg" / "registry-blobs.json");
  Pusher pusher(session, std::move(plan), destination, locations, external);
  return pusher.run();
}

}  // namespace hwimg::registry
