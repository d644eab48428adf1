// The manifests of a push: checked with the blobs (an unchanged push writes nothing), put once
// their blobs are up, and put again after a recheck when the registry does not see a blob yet.

#include <algorithm>

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/detail/pusher.hpp"

namespace hwimg::registry {

std::string Pusher::manifest_reference(const PlannedManifest& manifest) {
  return manifest.tag.empty() ? manifest.descriptor.digest.str() : manifest.tag;
}

void Pusher::check_manifest(const PlannedManifest& manifest) {
  Request request{Method::head, fmt::format("/v2/{}/manifests/{}", m_destination.repository,
                                            manifest_reference(manifest))};
  request.headers.push_back(manifest_accept_header());
  exchange(std::move(request), Retry::safe, [this, &manifest](Response r) {
    // Anything but a match (absent, another digest, an error) means: put it.
    if (r.ok() && r.status == 200 && r.header("docker-content-digest") == manifest.descriptor.digest.str()) {
      m_present_manifests.insert(&manifest);
    }
  });
}

void Pusher::queue_manifest(const PlannedManifest& manifest) {
  if (!manifest.tag.empty()) m_summary.tags.push_back(manifest.tag);
  if (m_present_manifests.contains(&manifest)) {
    ++m_summary.manifests_present;
    return;
  }
  m_pending_manifests.push_back(&manifest);
}

void Pusher::start_manifests() {
  while (!m_error && m_active < manifest_parallelism && !m_pending_manifests.empty()) {
    const auto* manifest = m_pending_manifests.front();
    m_pending_manifests.pop_front();
    ++m_active;
    put_manifest(*manifest);
  }
}

void Pusher::put_manifest(const PlannedManifest& manifest, unsigned attempt) {
  const auto reference = manifest_reference(manifest);
  Request request{Method::put, fmt::format("/v2/{}/manifests/{}", m_destination.repository, reference)};
  request.headers.push_back("Content-Type: " + manifest.descriptor.media_type);
  request.body = manifest.bytes;
  exchange(std::move(request), Retry::safe, [this, &manifest, reference, attempt](Response r) {
    if (manifest_blob_unknown(r) && attempt + 1 < m_session.options().max_attempts && !m_error) {
      return recheck_blobs(manifest, r, attempt);
    }
    --m_active;
    if (const auto group = m_group_of.find(&manifest); group != m_group_of.end()) {
      return referrer_stored(*group->second, manifest, r);
    }
    if (!r.ok() || r.status != 201) {
      const auto tries = attempt == 0 ? std::string() : fmt::format(" (after {} attempts)", attempt + 1);
      return fail_with(Error{fmt::format("failed to push manifest {}: {}{}", reference, describe(r), tries)});
    }
    if (const auto digest = r.header("docker-content-digest"); digest && *digest != manifest.descriptor.digest.str()) {
      return fail_with(Error{fmt::format("failed to push manifest {}: the registry stored it as {}, but the {} bytes "
                                         "sent hash to {}",
                                         reference, *digest, manifest.bytes.size(), manifest.descriptor.digest.str())});
    }
    ++m_summary.manifests_pushed;
    start_manifests();
  });
}

// A registry that does not see a blob the manifest names (Debian's 2.8.2 answers so while another
// push rewrites the blob's link in the same repository): HEAD each blob it names, upload the
// missing ones, then put it again after a backoff.
void Pusher::recheck_blobs(const PlannedManifest& manifest, const Response& refused, unsigned attempt) {
  const auto delay = backoff_delay(refused, attempt, m_session.random());
  m_output.log(fmt::format("manifest {} refused ({}): checking its blobs, putting it again in {} ms",
                           manifest_reference(manifest), describe(refused), delay.count()));
  // An index names manifests, not blobs: it is only put again.
  std::vector<BlobJob*> jobs;
  const auto add = [&](const oci::Digest& digest) {
    const auto it = m_job_of.find(digest);
    if (it != m_job_of.end() && std::ranges::find(jobs, it->second) == jobs.end()) jobs.push_back(it->second);
  };
  if (oci::media_type::is_manifest(manifest.descriptor.media_type)) {
    if (const auto parsed = oci::parse_manifest(manifest.bytes)) {
      add(parsed->config.digest);
      for (const auto& layer : parsed->layers) add(layer.digest);
    }
  }
  auto left = std::make_shared<std::size_t>(jobs.size());
  auto again = [this, &manifest, attempt, delay] {
    m_session.transport().after(delay, [this, &manifest, attempt] { put_manifest(manifest, attempt + 1); });
  };
  if (jobs.empty()) return again();
  for (auto* job : jobs) {
    const bool idle = job->waiters.empty();
    job->waiters.push_back([left, again] {
      if (--*left == 0) again();
    });
    if (!idle) continue;
    job->attempt = 0;
    job->hasher = oci::Sha256();
    job->hashed = 0;
    check_blob(*job);
  }
}

}  // namespace hwimg::registry
