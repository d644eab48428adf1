#include "hwimg/registry/detail/push.hpp"

#include <csignal>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/detail/blob_locations.hpp"
#include "hwimg/registry/push_plan.hpp"
#include "hwimg/registry/referrers.hpp"
#include "hwimg/util/fd.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::registry {
namespace {

using Clock = std::chrono::steady_clock;

// Mount sources beyond this many repositories are not worth a larger token scope.
constexpr std::size_t max_mount_sources = 4;
// Manifests are small: more of them go at once than uploads.
constexpr unsigned manifest_parallelism = 16;
// Mounts and blobs this small move (almost) no bytes: they go at once like manifests, beside the -j
// slots of the real uploads, which only bound bandwidth.
constexpr std::int64_t small_blob_size = 1 << 20;

// A blob copied from another registry while the upload sends it: a thread reads it from there into
// a pipe that the upload's body reads, so it is never stored on this machine.
class Relay {
public:
  static Result<std::unique_ptr<Relay>> start(const ClientOptions& options, Reference source, oci::Descriptor blob) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return fail("failed to make a pipe: {}", util::errno_text(errno));
    auto relay = std::unique_ptr<Relay>(new Relay(util::UniqueFd(ends[0])));
    ::fcntl(ends[1], F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups; the default 64 KiB works too
    relay->m_thread = std::thread([relay = relay.get(), write_end = util::UniqueFd(ends[1]), options,
                                   source = std::move(source), blob = std::move(blob)]() mutable {
      relay->copy(options, source, blob, std::move(write_end));
    });
    return relay;
  }
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;
  ~Relay() {
    m_read.reset();  // a writer blocked on a full pipe gets EPIPE and stops
    if (m_thread.joinable()) m_thread.join();
  }

  [[nodiscard]] int read_end() const { return m_read.get(); }
  // Why the copy stopped early, if it did.
  [[nodiscard]] std::string error() {
    std::lock_guard lock(m_mutex);
    return m_error;
  }

private:
  explicit Relay(util::UniqueFd read) : m_read(std::move(read)) {}

  void copy(const ClientOptions& options, const Reference& source, const oci::Descriptor& blob, util::UniqueFd out) {
    // A closed read end must answer EPIPE here, not kill the process.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    auto copied = [&]() -> Result<void> {
      HWIMG_TRY_ASSIGN(auto client, Client::create(options));
      HWIMG_TRY_ASSIGN(const auto answer, client.open_stream(source, ReadMethod::get, "blobs/" + blob.digest.str(), {}));
      if (answer.status != 200) return fail("{}", describe_answer(answer));
      while (true) {
        HWIMG_TRY_ASSIGN(auto chunk, answer.streamed ? client.next_chunk() : Result<std::optional<std::string>>());
        if (!chunk) break;
        for (std::string_view data = *chunk; !data.empty();) {
          const auto n = ::write(out.get(), data.data(), data.size());
          if (n < 0 && errno == EINTR) continue;
          if (n < 0) return fail("the upload stopped reading: {}", util::errno_text(errno));
          data.remove_prefix(static_cast<std::size_t>(n));
        }
      }
      return {};
    }();
    if (!copied) {
      std::lock_guard lock(m_mutex);
      m_error = copied.error().message;
    }
  }

  util::UniqueFd m_read;
  std::thread m_thread;
  std::mutex m_mutex;
  std::string m_error;
};

struct BlobJob {
  oci::Descriptor blob;
  std::optional<std::string> mount_from;
  std::optional<Reference> external;  // not in the layout: where it is
  const std::string* in_memory = nullptr;  // made by the plan (an artifact's config or spec)
  std::unique_ptr<Relay> relay;       // an external blob of another registry, on its way
  unsigned attempt = 0;
  std::string location;
  std::uint64_t offset = 0;
  oci::Sha256 hasher;
  std::uint64_t hashed = 0;
  bool holds_slot = false;  // one of the -j upload slots, or of the light ones
  bool light_slot = false;  // which: a failed mount keeps its light slot for the upload it turns into

  [[nodiscard]] bool light() const { return blob.size <= small_blob_size || mount_from.has_value(); }
  // Set while a refused manifest has this blob checked again: run once it is there.
  std::vector<std::function<void()>> waiters;
};

// The referrers of one subject: put beside the variant manifests (a registry must take a referrer
// before its subject, docs/nfd.md#referrers), then listed in the subject's referrers tag with one
// read-modify-write beside the root where the registry did not index them itself.
struct SubjectReferrers {
  oci::Digest subject;
  std::vector<const PlannedManifest*> referrers;
  std::set<oci::Digest> listed;          // in the referrers tag's index when the push began
  std::vector<oci::Descriptor> to_list;  // put, and answered without OCI-Subject
};

class Pusher {
public:
  Pusher(Session& session, PushPlan plan, Reference destination, BlobLocations& locations,
         const ExternalBlobs& external)
      : m_session(session), m_plan(std::move(plan)), m_destination(std::move(destination)), m_locations(locations),
        m_external(external), m_output(*session.options().output) {}

  Result<PushSummary> run() {
    const auto& registry = m_destination.registry;
    HWIMG_TRY(m_session.connect(registry, Probe::ping));
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
    m_scopes = {repository_scope(m_destination.repository, "pull,push")};
    for (const auto& source : sources) m_scopes.push_back(repository_scope(source, "pull"));
    HWIMG_TRY(m_session.authorize(registry, m_scopes));

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
    for (const auto& m : m_plan.manifests) check_manifest(m);
    check_manifest(m_plan.root);
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

private:
  std::string blob_url(const oci::Digest& digest) const {
    return fmt::format("/v2/{}/blobs/{}", m_destination.repository, digest.str());
  }

  Result<void> finish_phase() {
    auto r = m_session.transport().run();
    clear_progress();
    if (!r) return r;
    if (m_error) return std::unexpected(*m_error);
    return {};
  }

  void fail_with(Error error) {
    if (!m_error) m_error = std::move(error);
  }

  void exchange(Request request, Retry retry, std::function<void(Response)> on_response) {
    m_session.exchange(m_destination.registry, std::move(request), m_scopes, retry,
                       [this, on_response = std::move(on_response)](Result<Response> r) {
                         if (!r) return fail_with(r.error());
                         on_response(std::move(*r));
                       });
  }

  // ---- blobs ----
  void start_uploads() {
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

  void blob_done(BlobJob& job) {
    if (std::exchange(job.holds_slot, false)) --(job.light_slot ? m_active_light : m_active);
    if (!job.waiters.empty()) {
      for (auto& waiter : std::exchange(job.waiters, {})) waiter();
      return;
    }
    ++m_blobs_done;
    show_progress();
    start_uploads();
  }

  void blob_failed(BlobJob& job, const std::string& why) {
    fail_with(Error{fmt::format("failed to push blob {}: {}", job.blob.digest.str(), why)});
  }

  void check_blob(BlobJob& job) {
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
      if (r.ok() && r.status == 404) {
        // A blob checked again for a refused manifest goes up at once: the slots are the manifests'.
        if (job.holds_slot || !job.waiters.empty()) return start_upload(job);
        m_pending_blobs.push_back(&job);
        return start_uploads();
      }
      blob_failed(job, describe(r));
    });
  }

  void start_upload(BlobJob& job) {
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

  Request data_request(BlobJob& job, Method method, std::string url, std::uint64_t offset, std::uint64_t length) {
    Request request{method, std::move(url)};
    request.headers.push_back("Content-Type: application/octet-stream");
    request.channel = Channel::bulk;
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

  std::string finish_url(const BlobJob& job) const {
    return job.location + (job.location.find('?') == std::string::npos ? "?" : "&") +
           "digest=" + url_encode(job.blob.digest.str());
  }

  void send_whole(BlobJob& job) {
    const auto size = static_cast<std::uint64_t>(job.blob.size);
    if (job.external) {
      auto relay = Relay::start(m_session.options(), *job.external, job.blob);
      if (!relay) return blob_failed(job, relay.error().message);
      job.relay = std::move(*relay);
      job.hasher = oci::Sha256();
      job.hashed = 0;
    }
    exchange(data_request(job, Method::put, finish_url(job), 0, size), Retry::never, [this, &job](Response r) {
      if (job.relay) {
        const auto why = job.relay->error();
        job.relay.reset();
        if (!why.empty() && !(r.ok() && r.status == 201)) {
          return retry_or_fail(job, r, fmt::format("relaying it from {} failed: {}", job.external->name(), why));
        }
        ++m_summary.blobs_relayed;
      }
      finish_upload(job, r);
    });
  }

  void send_from_memory(BlobJob& job) {
    Request request{Method::put, finish_url(job)};
    request.headers.push_back("Content-Type: application/octet-stream");
    request.body = *job.in_memory;
    exchange(std::move(request), Retry::never, [this, &job](Response r) { finish_upload(job, r); });
  }

  void send_chunk(BlobJob& job) {
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
  void count_upload(const BlobJob& job) {
    if (job.in_memory) return;
    ++m_summary.blobs_uploaded;
    m_summary.bytes_uploaded += static_cast<std::uint64_t>(job.blob.size);
  }

  std::optional<std::string> corruption(BlobJob& job) {
    if (job.hashed != static_cast<std::uint64_t>(job.blob.size)) return std::nullopt;
    auto copy = std::exchange(job.hasher, oci::Sha256());
    const auto actual = copy.finish();
    job.hashed = 0;
    if (actual == job.blob.digest) return std::nullopt;
    return fmt::format("the layout's copy is corrupt: its content hashes to {}", actual.str());
  }

  void finish_upload(BlobJob& job, const Response& r) {
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
  void retry_or_fail(BlobJob& job, const Response& r, const std::optional<std::string>& reason = std::nullopt) {
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

  // ---- manifests ----
  static std::string manifest_reference(const PlannedManifest& manifest) {
    return manifest.tag.empty() ? manifest.descriptor.digest.str() : manifest.tag;
  }

  void check_manifest(const PlannedManifest& manifest) {
    Request request{Method::head, fmt::format("/v2/{}/manifests/{}", m_destination.repository,
                                              manifest_reference(manifest))};
    request.headers.push_back(manifest_accept_header());
    exchange(std::move(request), Retry::safe, [this, &manifest](Response r) {
      // Anything but a match (absent, another digest, an error) means: put it.
      if (r.ok() && r.status == 200 && r.header("docker-content-digest") == manifest.descriptor.digest.str()) {
        m_present_manifests.insert(&manifest);
        // Only a manifest already there can have its referrers listed already.
        if (const auto group = m_subjects.find(manifest.descriptor.digest); group != m_subjects.end()) {
          check_referrers(group->second);
        }
      }
    });
  }

  void queue_manifest(const PlannedManifest& manifest) {
    if (!manifest.tag.empty()) m_summary.tags.push_back(manifest.tag);
    if (m_present_manifests.contains(&manifest)) {
      ++m_summary.manifests_present;
      return;
    }
    m_pending_manifests.push_back(&manifest);
  }

  void start_manifests() {
    while (!m_error && m_active < manifest_parallelism && !m_pending_manifests.empty()) {
      const auto* manifest = m_pending_manifests.front();
      m_pending_manifests.pop_front();
      ++m_active;
      put_manifest(*manifest);
    }
  }

  void put_manifest(const PlannedManifest& manifest, unsigned attempt = 0) {
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
        return fail_with(Error{fmt::format("failed to push manifest {}: the registry stored it as {}", reference,
                                           *digest)});
      }
      ++m_summary.manifests_pushed;
      start_manifests();
    });
  }

  // A registry that does not see a blob the manifest names (Debian's 2.8.2 answers so while another
  // push rewrites the blob's link in the same repository): HEAD each blob it names, upload the
  // missing ones, then put it again after a backoff.
  void recheck_blobs(const PlannedManifest& manifest, const Response& refused, unsigned attempt) {
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

  // ---- referrers ----
  void group_referrer(const PlannedManifest& referrer) {
    const auto manifest = oci::parse_manifest(referrer.bytes);  // add_referrer checked it has a subject
    if (!manifest || !manifest->subject) return;
    auto& group = m_subjects[manifest->subject->digest];
    group.subject = manifest->subject->digest;
    group.referrers.push_back(&referrer);
    m_group_of[&referrer] = &group;
  }

  std::string referrers_tag_url(const SubjectReferrers& group) const {
    return fmt::format("/v2/{}/manifests/{}", m_destination.repository, referrers_tag(group.subject));
  }

  // What the subject's referrers tag lists: those referrers need no put. Any failure here only
  // means they are put again, which changes nothing. The lookups run in the checks' round.
  void check_referrers(SubjectReferrers& group) {
    Request request{Method::get, referrers_tag_url(group)};
    request.headers.push_back(manifest_accept_header());
    exchange(std::move(request), Retry::safe, [&group](Response r) {
      if (!r.ok() || r.status != 200) return;
      if (const auto index = oci::parse_index(r.body)) {
        for (const auto& d : index->manifests) group.listed.insert(d.digest);
      }
    });
  }

  void queue_referrers(SubjectReferrers& group) {
    for (const auto* referrer : group.referrers) {
      if (group.listed.contains(referrer->descriptor.digest)) {
        ++m_summary.referrers_listed;
        continue;
      }
      m_pending_manifests.push_back(referrer);
    }
  }

  void referrer_failed(std::string why) { m_summary.referrer_failures.push_back(std::move(why)); }

  void referrer_stored(SubjectReferrers& group, const PlannedManifest& referrer, const Response& r) {
    if (!r.ok() || r.status != 201) {
      referrer_failed(fmt::format("failed to push referrer {} of {}: {}", referrer.descriptor.digest.str(),
                                  group.subject.str(), describe(r)));
    } else {
      ++m_summary.referrers_put;
      // A registry with the referrers API answers OCI-Subject and lists it itself (docs/nfd.md#referrers).
      if (!r.header("oci-subject")) group.to_list.push_back(referrer.descriptor);
    }
    start_manifests();
  }

  // Read again just before the write: another pusher may have listed its own referrers since.
  void list_referrers(SubjectReferrers& group) {
    const auto failed = [this, &group](const std::string& why) {
      referrer_failed(fmt::format("failed to list the referrers of {} under {}: {}", group.subject.str(),
                                  referrers_tag(group.subject), why));
    };
    Request request{Method::get, referrers_tag_url(group)};
    request.headers.push_back(manifest_accept_header());
    exchange(std::move(request), Retry::safe, [this, &group, failed](Response r) {
      if (!r.ok() || (r.status != 200 && r.status != 404)) return failed(describe(r));
      oci::Index index;
      if (r.status == 200) {
        auto read = read_referrers_index(r.header("content-type").value_or(""), r.body);
        if (!read) return failed(read.error().message);
        index = std::move(*read);
      }
      if (!add_referrers(index, group.to_list)) return;
      Request put{Method::put, referrers_tag_url(group)};
      put.headers.push_back(fmt::format("Content-Type: {}", oci::media_type::index));
      put.body = oci::to_json(index);
      exchange(std::move(put), Retry::safe, [failed](Response done) {
        if (!done.ok() || done.status != 201) failed(describe(done));
      });
    });
  }

  // ---- progress on a terminal ----
  void show_progress() {
    const auto now = Clock::now();
    if (now - m_last_progress < std::chrono::milliseconds(100)) return;
    m_last_progress = now;
    m_output.status(fmt::format("pushing {}: blobs {}/{}, {:.1f} MiB sent", m_destination.name(), m_blobs_done,
                                m_jobs.size(), static_cast<double>(m_bytes_read) / (1 << 20)));
  }
  void clear_progress() { m_output.clear_status(); }

  Session& m_session;
  PushPlan m_plan;
  Reference m_destination;
  BlobLocations& m_locations;
  const ExternalBlobs& m_external;
  util::Output& m_output;
  Scopes m_scopes;
  std::deque<BlobJob> m_jobs;
  std::map<oci::Digest, BlobJob*> m_job_of;
  std::deque<BlobJob*> m_pending_blobs;
  std::deque<const PlannedManifest*> m_pending_manifests;
  std::set<const PlannedManifest*> m_present_manifests;
  std::map<oci::Digest, SubjectReferrers> m_subjects;
  std::map<const PlannedManifest*, SubjectReferrers*> m_group_of;
  std::filesystem::path m_blob_directory = m_plan.layout / "blobs" / "sha256";
  unsigned m_active = 0;
  unsigned m_active_light = 0;
  std::size_t m_blobs_done = 0;
  std::uint64_t m_bytes_read = 0;
  Clock::time_point m_last_progress{};
  std::optional<Error> m_error;
  PushSummary m_summary;
};

}  // namespace

Result<PushSummary> push_plan(Session& session, PushPlan plan, const Reference& destination,
                              const ExternalBlobs& external) {
  auto locations = BlobLocations::load(plan.layout.empty() ? std::filesystem::path()
                                                           : plan.layout / ".hwimg" / "registry-blobs.json");
  Pusher pusher(session, std::move(plan), destination, locations, external);
  return pusher.run();
}

}  // namespace hwimg::registry
