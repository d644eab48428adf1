// The referrers of a push (NFD artifacts, copied signatures): put beside the variant manifests and,
// where the registry lacks the referrers API, listed in each subject's referrers tag
// (docs/nfd.md#referrers).

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/detail/pusher.hpp"
#include "hwimg/registry/referrers.hpp"

namespace hwimg::registry {

void Pusher::group_referrer(const PlannedManifest& referrer) {
  const auto manifest = oci::parse_manifest(referrer.bytes);  // add_referrer checked it has a subject
  if (!manifest || !manifest->subject) return;
  auto& group = m_subjects[manifest->subject->digest];
  group.subject = manifest->subject->digest;
  group.referrers.push_back(&referrer);
  m_group_of[&referrer] = &group;
}

std::string Pusher::referrers_tag_url(const SubjectReferrers& group) const {
  return fmt::format("/v2/{}/manifests/{}", m_destination.repository, referrers_tag(group.subject));
}

// What the subject's referrers tag lists: those referrers need no put, and the rest are added to
// that index when it is written. Any failure here only means the tag is read again before that.
// The lookups run in the checks' round, for every subject.
void Pusher::check_referrers(SubjectReferrers& group) {
  Request request{Method::get, referrers_tag_url(group)};
  request.headers.push_back(manifest_accept_header());
  exchange(std::move(request), Retry::safe, [this, &group](Response r) {
    auto index = referrers_tag_index(r, m_destination.with_tag(referrers_tag(group.subject)), group.subject);
    if (!index) return;
    for (const auto& d : index->manifests) group.listed.insert(d.digest);
    group.tag_index = std::move(*index);
  });
}

void Pusher::queue_referrers(SubjectReferrers& group) {
  for (const auto* referrer : group.referrers) {
    if (group.listed.contains(referrer->descriptor.digest)) {
      ++m_summary.referrers_listed;
      continue;
    }
    m_pending_manifests.push_back(referrer);
  }
}

void Pusher::referrer_stored(SubjectReferrers& group, const PlannedManifest& referrer, const Response& r) {
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

// Written beside the root from the index the checks read: a registry must take a referrer before
// its subject, so the tag can name the referrers once they are stored. Another pusher adding its
// own referrers to the same tag since the checks would lose them (docs/nfd.md#referrers). Where the
// checks could not read it, the tag is read first.
void Pusher::list_referrers(SubjectReferrers& group) {
  if (group.tag_index) return write_referrers_tag(group, *group.tag_index);
  Request request{Method::get, referrers_tag_url(group)};
  request.headers.push_back(manifest_accept_header());
  exchange(std::move(request), Retry::safe, [this, &group](Response r) {
    auto index = referrers_tag_index(r, m_destination.with_tag(referrers_tag(group.subject)), group.subject);
    if (!index) return referrers_tag_failed(group, index.error().message);
    write_referrers_tag(group, std::move(*index));
  });
}

void Pusher::write_referrers_tag(SubjectReferrers& group, oci::Index index) {
  if (!add_referrers(index, group.to_list)) return;
  Request put{Method::put, referrers_tag_url(group)};
  put.headers.push_back(fmt::format("Content-Type: {}", oci::media_type::index));
  put.body = oci::to_json(index);
  exchange(std::move(put), Retry::safe, [this, &group](Response done) {
    if (!done.ok() || done.status != 201) referrers_tag_failed(group, describe(done));
  });
}

void Pusher::referrers_tag_failed(const SubjectReferrers& group, const std::string& why) {
  referrer_failed(fmt::format("failed to list the referrers of {} under {}: {}", group.subject.str(),
                              referrers_tag(group.subject), why));
}

}  // namespace hwimg::registry
