// The blobs of a push: checked, mounted, uploaded (whole or in chunks) or relayed, each verified
// against its digest as it is read, and restarted from its HEAD when an upload fails.

#include <algorithm>

#include <sys/stat.h>

#include "hwimg/registry/detail/pusher.hpp"

namespace hwimg::registry {

void Pusher::start_uploads() {
  for (auto it = m_pending_blobs.begin(); !m_error && it != m_pending_blobs.end();) {
    auto* job = *it;
    auto& active = job->light() ? m_active_light : m_active;
    if (active >= (job->light() ? manifest_parallelism : m_session.options().jobs)) {
      ++it;
      continue;
    }
    it = m_pending_blobs.erase(it);
    ++active;
    job->holds_slot = true;
    job->light_slot = job->light();
    start_upload(*job);
  }
}

void Pusher::blob_done(BlobJob& job) {
  if (std::exchange(job.holds_slot, false)) --(job.light_slot ? m_active_light : m_active);
  if (!job.waiters.empty()) {
    for (auto& waiter : std::exchange(job.waiters, {})) waiter();
    return;
  }
  ++m_blobs_done;
  show_progress();
  start_uploads();
}

void Pusher::blob_failed(BlobJob& job, const std::string& why) {
  fail_with(Error{fmt::format("failed to push blob {}: {}", job.blob.digest.str(), why)});
}

void Pusher::check_blob(BlobJob& job) {
  Request request{Method::head, blob_url(job.blob.digest)};
  request.follow_redirects = true;
  exchange(std::move(request), Retry::safe, [this, &job](Response r) {
    if (r.ok() && r.status == 200) {
      const auto length = r.header("content-length");
      if (length && *length != std::to_string(job.blob.size)) {
        return blob_failed(job, fmt::format("the registry holds it with size {}, the layout says {}", *length,
                                            job.blob.size));
      }
      if (job.waiters.empty() && job.attempt > 0) {
        count_upload(job);
      } else if (job.waiters.empty() && !job.in_memory) {
        ++m_summary.blobs_present;
      }
      return blob_done(job);
    }
    // A check that kept failing after its retries (Debian's distribution 2.8 answers 500 while
    // concurrent uploads rewrite the blob's link in place) is no answer: the upload, harmless for
    // a blob that is there, rewrites the link, and its own failures are retried as uploads are.
    if ((r.ok() && r.status == 404) || is_transient(r)) {
      // A blob checked again for a refused manifest goes up at once: the slots are the manifests'.
      if (job.holds_slot || !job.waiters.empty()) return start_upload(job);
      m_pending_blobs.push_back(&job);
      return start_uploads();
    }
    blob_failed(job, describe(r));
  });
}

void Pusher::start_upload(BlobJob& job) {
  struct stat info {};
  const auto path = m_blob_directory / job.blob.digest.hex();
  if (!job.external && !job.in_memory && (::stat(path.c_str(), &info) != 0 || info.st_size != job.blob.size)) {
    return blob_failed(job, fmt::format("the layout's copy is missing or not {} bytes long", job.blob.size));
  }
  auto url = fmt::format("/v2/{}/blobs/uploads/", m_destination.repository);
  if (job.mount_from) url += fmt::format("?mount={}&from={}", url_encode(job.blob.digest.str()), url_encode(*job.mount_from));
  Request request{Method::post, url};
  exchange(std::move(request), Retry::safe, [this, &job](Response r) {
    if (r.ok() && r.status == 201 && job.mount_from) {
      if (!job.in_memory) ++m_summary.blobs_mounted;
      return blob_done(job);
    }
    if (job.mount_from && job.external && r.ok() && !is_transient(r) && r.status != 202) {
      job.mount_from.reset();  // not mountable from there: relayed instead
      return start_upload(job);
    }
    if (job.mount_from && r.ok() && r.status >= 400 && !is_transient(r)) {
      job.mount_from.reset();  // some registries refuse the mount parameters: upload instead
      return start_upload(job);
    }
    job.mount_from.reset();  // a failed mount already opened an upload session
    const auto location = r.header("location");
    if (!r.ok() || r.status != 202 || !location) return retry_or_fail(job, r);
    job.location = resolve_url(r.url, *location);
    job.offset = 0;
    if (job.in_memory) return send_from_memory(job);
    // A relayed blob goes in one request: a pipe cannot be read twice for chunks and retries.
    if (!job.external && static_cast<std::uint64_t>(job.blob.size) > m_session.options().chunk_size) {
      return send_chunk(job);
    }
    send_whole(job);
  });
}

Request Pusher::data_request(BlobJob& job, Method method, std::string url, std::uint64_t offset, std::uint64_t length) {
  Request request{method, std::move(url)};
  request.headers.push_back("Content-Type: application/octet-stream");
  // Large blobs get connections of their own (Request::channel); a small one goes beside the
  // manifests on the multiplexed connection, where a connection of its own would first cost a
  // TLS handshake.
  request.channel = job.blob.size > small_blob_size ? Channel::bulk : Channel::multiplexed;
  request.file_body = FileBody{m_blob_directory / job.blob.digest.hex(), offset, length,
                               job.relay ? job.relay->read_end() : -1};
  request.on_body_read = [this, &job, offset](std::uint64_t at, std::string_view data) {
    if (offset + at != job.hashed) return;  // re-sent bytes are hashed once
    job.hasher.update(data);
    job.hashed += data.size();
    m_bytes_read += data.size();
    show_progress();
  };
  return request;
}

std::string Pusher::finish_url(const BlobJob& job) const {
  return job.location + (job.location.find('?') == std::string::npos ? "?" : "&") +
         "digest=" + url_encode(job.blob.digest.str());
}

void Pusher::send_whole(BlobJob& job) {
  const auto size = static_cast<std::uint64_t>(job.blob.size);
  if (job.external) {
    if (!m_relay_clients) m_relay_clients = std::make_shared<RelayClients>(m_session.options());
    auto relay = Relay::start(m_relay_clients, *job.external, job.blob);
    if (!relay) return blob_failed(job, relay.error().message);
    job.relay = std::move(*relay);
    job.hasher = oci::Sha256();
    job.hashed = 0;
  }
  exchange(data_request(job, Method::put, finish_url(job), 0, size), Retry::never, [this, &job](Response r) {
    if (job.relay) {
      const auto why = job.relay->finish();
      job.relay.reset();
      if (!why.empty() && !(r.ok() && r.status == 201)) {
        return retry_or_fail(job, r, fmt::format("relaying it from {} failed: {}", job.external->name(), why));
      }
      ++m_summary.blobs_relayed;
    }
    finish_upload(job, r);
  });
}

void Pusher::send_from_memory(BlobJob& job) {
  Request request{Method::put, finish_url(job)};
  request.headers.push_back("Content-Type: application/octet-stream");
  request.body = *job.in_memory;
  exchange(std::move(request), Retry::never, [this, &job](Response r) { finish_upload(job, r); });
}

void Pusher::send_chunk(BlobJob& job) {
  const auto size = static_cast<std::uint64_t>(job.blob.size);
  const auto length = std::min(m_session.options().chunk_size, size - job.offset);
  auto request = data_request(job, Method::patch, job.location, job.offset, length);
  request.headers.push_back(fmt::format("Content-Range: {}-{}", job.offset, job.offset + length - 1));
  exchange(std::move(request), Retry::never, [this, &job, length](Response r) {
    const auto location = r.header("location");
    if (!r.ok() || r.status != 202 || !location) return retry_or_fail(job, r);
    job.location = resolve_url(r.url, *location);
    job.offset += length;
    if (job.offset < static_cast<std::uint64_t>(job.blob.size)) return send_chunk(job);
    if (auto corrupt = corruption(job)) return blob_failed(job, *corrupt);
    Request finish{Method::put, finish_url(job)};
    finish.headers.push_back("Content-Type: application/octet-stream");
    exchange(std::move(finish), Retry::never, [this, &job](Response done) { finish_upload(job, done); });
  });
}

// The image's blobs: those the plan made in memory for its referrers are counted with them.
void Pusher::count_upload(const BlobJob& job) {
  if (job.in_memory) return;
  ++m_summary.blobs_uploaded;
  m_summary.bytes_uploaded += static_cast<std::uint64_t>(job.blob.size);
}

std::optional<std::string> Pusher::corruption(BlobJob& job) {
  if (job.hashed != static_cast<std::uint64_t>(job.blob.size)) return std::nullopt;
  auto copy = std::exchange(job.hasher, oci::Sha256());
  const auto actual = copy.finish();
  job.hashed = 0;
  if (actual == job.blob.digest) return std::nullopt;
  return fmt::format("the layout's copy is corrupt: its content hashes to {}", actual.str());
}

void Pusher::finish_upload(BlobJob& job, const Response& r) {
  if (r.ok() && r.status == 201) {
    if (const auto digest = r.header("docker-content-digest"); digest && *digest != job.blob.digest.str()) {
      return blob_failed(job, fmt::format("the registry stored it as {}", *digest));
    }
    count_upload(job);
    return blob_done(job);
  }
  if (auto corrupt = corruption(job)) return blob_failed(job, *corrupt);
  retry_or_fail(job, r);
}

// An upload session cannot be resumed reliably (distribution 2.8.2), so a failed upload starts
// over from the HEAD: the lost answer may have been the 201 of a finished upload, and libcurl
// itself re-sends a request once when a reused connection dies, which then finds the session gone.
// Right bytes refused as DIGEST_INVALID are 2.8.2 racing another push of the same blob.
void Pusher::retry_or_fail(BlobJob& job, const Response& r, const std::optional<std::string>& reason) {
  if (!(is_transient(r) || upload_restartable(r)) || job.attempt + 1 >= m_session.options().max_attempts) {
    const auto why = reason.value_or(describe(r));
    if (job.attempt == 0) return blob_failed(job, why);
    return blob_failed(job, fmt::format("{} (after {} attempts)", why, job.attempt + 1));
  }
  const auto delay = backoff_delay(r, job.attempt++, m_session.random());
  m_output.log(fmt::format("restarting upload of {} in {} ms ({})", job.blob.digest.short_hex(), delay.count(),
                           describe(r)));
  m_session.transport().after(delay, [this, &job] { check_blob(job); });
}

}  // namespace hwimg::registry
