#pragma once
// Internal to hwimg::registry: the state of one push (registry/push.cpp runs its phases; its
// blobs, manifests and referrers are in push_blobs.cpp, push_manifests.cpp, push_referrers.cpp).

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hwimg/oci/digest.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/registry/detail/blob_locations.hpp"
#include "hwimg/registry/detail/relay.hpp"
#include "hwimg/registry/detail/session.hpp"
#include "hwimg/registry/push_plan.hpp"

namespace hwimg::registry {

// Mount sources beyond this many repositories are not worth a larger token scope.
inline constexpr std::size_t max_mount_sources = 4;
// Manifests (and small blobs and mounts) are small: many go at once, as streams of one HTTP/2
// connection (Go's HTTP/2 server, distribution's, takes 250 at once; libcurl queues what its
// connection limit does not take on HTTP/1.1). 16 cost a 16-variant push (32 manifests with the NFD
// artifacts, 33 small blobs) two or three extra round trips.
inline constexpr unsigned manifest_parallelism = 64;
// Mounts and blobs this small move (almost) no bytes: they go at once like manifests, beside the -j
// slots of the real uploads, which only bound bandwidth.
inline constexpr std::int64_t small_blob_size = 1 << 20;

// One blob of the plan on its way: checked, mounted, uploaded (in chunks) or relayed, and retried.
struct BlobJob {
  oci::Descriptor blob;
  std::optional<std::string> mount_from;
  std::optional<Reference> external;       // not in the layout: where it is
  const std::string* in_memory = nullptr;  // made by the plan (an artifact's config or spec)
  std::unique_ptr<Relay> relay;            // an external blob of another registry, on its way
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
  // The referrers tag's index as the checks read it (empty where the tag did not exist); nullopt
  // when that read failed, and the tag is read again before it is written.
  std::optional<oci::Index> tag_index;
};

class Pusher {
public:
  Pusher(Session& session, PushPlan plan, Reference destination, BlobLocations& locations,
         const ExternalBlobs& external)
      : m_session(session), m_plan(std::move(plan)), m_destination(std::move(destination)), m_locations(locations),
        m_external(external), m_output(*session.options().output) {}

  // The phases: blobs and checks, variant manifests and referrers, the root and the referrers tags.
  Result<PushSummary> run();

private:
  // The jobs of the plan's blobs, each with where it may be mounted from; the repositories mounted
  // from (whose pull scope the token needs).
  std::set<std::string> make_jobs();
  // The first phase: blob checks, mounts and uploads, manifest and referrers-tag checks.
  void start_checks();
  // The phases' common parts: push.cpp.
  std::string blob_url(const oci::Digest& digest) const;
  Result<void> finish_phase();
  void fail_with(Error error);
  void exchange(Request request, Retry retry, std::function<void(Response)> on_response);

  // Blobs: push_blobs.cpp.
  void start_uploads();
  void blob_done(BlobJob& job);
  void blob_failed(BlobJob& job, const std::string& why);
  void check_blob(BlobJob& job);
  void start_upload(BlobJob& job);
  Request data_request(BlobJob& job, Method method, std::string url, std::uint64_t offset, std::uint64_t length);
  std::string finish_url(const BlobJob& job) const;
  void send_whole(BlobJob& job);
  void send_from_memory(BlobJob& job);
  void send_chunk(BlobJob& job);
  void count_upload(const BlobJob& job);
  std::optional<std::string> corruption(BlobJob& job);
  void finish_upload(BlobJob& job, const Response& r);
  void retry_or_fail(BlobJob& job, const Response& r, const std::optional<std::string>& reason = std::nullopt);

  // Manifests: push_manifests.cpp.
  static std::string manifest_reference(const PlannedManifest& manifest);
  void check_manifest(const PlannedManifest& manifest);
  void queue_manifest(const PlannedManifest& manifest);
  void start_manifests();
  void put_manifest(const PlannedManifest& manifest, unsigned attempt = 0);
  void recheck_blobs(const PlannedManifest& manifest, const Response& refused, unsigned attempt);

  // Referrers: push_referrers.cpp.
  void group_referrer(const PlannedManifest& referrer);
  std::string referrers_tag_url(const SubjectReferrers& group) const;
  void check_referrers(SubjectReferrers& group);
  void queue_referrers(SubjectReferrers& group);
  void referrer_failed(std::string why) { m_summary.referrer_failures.push_back(std::move(why)); }
  void referrer_stored(SubjectReferrers& group, const PlannedManifest& referrer, const Response& r);
  void list_referrers(SubjectReferrers& group);
  void write_referrers_tag(SubjectReferrers& group, oci::Index index);
  void referrers_tag_failed(const SubjectReferrers& group, const std::string& why);

  // Progress on a terminal: push.cpp.
  void show_progress();
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
  std::chrono::steady_clock::time_point m_last_progress{};
  std::optional<Error> m_error;
  PushSummary m_summary;
  std::shared_ptr<RelayClients> m_relay_clients;  // made at the first relay
};

}  // namespace hwimg::registry
