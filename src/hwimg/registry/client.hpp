#pragma once
// The registry client: read and write manifests, blobs and tags on any OCI distribution registry,
// push an image layout with all its variants, and re-tag without moving blobs.
//
//   auto client = registry::Client::create({.ca_file = "ca.pem"});
//   auto ref = registry::parse_reference("127.0.0.1:5443/team/app:v1");
//   auto index = client->get_manifest(*ref);   // bytes, media type, verified digest

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwimg/oci/digest.hpp"
#include "hwimg/registry/credentials.hpp"
#include "hwimg/registry/options.hpp"
#include "hwimg/registry/push_plan.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/registry/response.hpp"

namespace hwimg::registry {

struct FetchedManifest {
  std::string bytes;       // exactly as served; their sha256 is `digest`
  std::string media_type;  // one of the OCI or Docker manifest/index types
  oci::Digest digest;
};

enum class ReadMethod { get, head };

// "Accept: " with every OCI and Docker manifest and index type (2.8.2 answers 404 without them).
[[nodiscard]] const std::string& manifest_accept_header();

// An answer to a manifest request checked as get_manifest checks it: anything but 200 refused with
// its status, then size, digest against the reference and Docker-Content-Digest, JSON, media type.
[[nodiscard]] Result<FetchedManifest> manifest_from_answer(const Response& answer, const Reference& reference);

// Blobs an image needs that are not in its layout, and the repository holding each (the layers
// of a registry base, for a build straight to a registry): skipped, mounted, or relayed
// from their registry as they upload, never stored here.
using ExternalBlobs = std::map<oci::Digest, Reference>;

struct PushSummary {
  oci::Digest digest;                // of the pushed index (or single manifest)
  std::string reference;             // "registry/repo:tag"
  std::size_t blobs_uploaded = 0;    // the image's and copied referrers' (not those made in memory)
  std::uint64_t bytes_uploaded = 0;
  std::size_t blobs_mounted = 0;
  std::size_t blobs_relayed = 0;     // copied from another registry as they were uploaded
  std::size_t blobs_present = 0;     // already in the repository
  std::size_t manifests_pushed = 0;  // variant manifests and the index that were PUT
  std::size_t manifests_present = 0; // already there under their tag (or digest)
  std::vector<std::string> tags;     // every tag written
  std::uint64_t requests = 0;        // HTTP exchanges, tokens and retries included
  std::size_t referrers_put = 0;     // referrer manifests put this time
  std::size_t referrers_listed = 0;  // listed already under their subject's referrers tag
  std::vector<std::string> referrer_failures;  // one line each; the image itself is pushed
  std::size_t compat_artifacts = 0;  // of the referrers, NFD artifacts of the variants (compat::plan_artifacts)

  // Blobs whose bytes went from this machine (relayed ones came from another registry).
  [[nodiscard]] std::size_t blobs_sent() const { return blobs_uploaded - blobs_relayed; }
};

enum class TagPages { all, first };

class Client {
public:
  [[nodiscard]] static Result<Client> create(ClientOptions options = {});
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();

  // GET of a manifest or index by tag or digest, with every OCI and Docker type in Accept; the
  // size (≤ oci::max_manifest_size), the digest (against the reference and Docker-Content-Digest), the JSON and
  // the media type are checked.
  [[nodiscard]] Result<FetchedManifest> get_manifest(const Reference& reference);
  // The same for several manifests of one repository, asked all at once (one round trip, not one
  // each); in the order asked, the first failure returned.
  [[nodiscard]] Result<std::vector<FetchedManifest>> get_manifests(const std::vector<Reference>& references);
  // PUT of exact bytes to the reference's tag (or digest); returns their digest.
  [[nodiscard]] Result<oci::Digest> put_manifest(const Reference& reference, std::string_view bytes,
                                                 std::string_view media_type);
  // The blob's size when the repository has it, nullopt when it does not.
  [[nodiscard]] Result<std::optional<std::int64_t>> head_blob(const Reference& repository, const oci::Digest& digest);
  // Downloads a blob into memory, refusing more than `max_size` bytes; the digest is verified.
  [[nodiscard]] Result<std::string> get_blob(const Reference& repository, const oci::Digest& digest,
                                             std::size_t max_size);
  // Every tag of the repository, following Link pagination, sorted and de-duplicated. `page_size`
  // asks for pages of that many tags (`?n=`); none: the registry's own paging. TagPages::first
  // stops after one request, for callers that only look for a few names.
  [[nodiscard]] Result<std::vector<std::string>> list_tags(const Reference& repository,
                                                           std::optional<std::size_t> page_size = std::nullopt,
                                                           TagPages pages = TagPages::all);
  // Deletes the manifest the reference names: a tag is resolved to its digest first, then
  // DELETE /v2/<repository>/manifests/<digest> (docs/compatibility.md#deleting-manifests).
  // Returns the deleted digest. Deleting an index leaves its variants' manifests in place.
  [[nodiscard]] Result<oci::Digest> delete_manifest(const Reference& reference);
  // DELETE /v2/<repository>/manifests/<tag or digest> as the reference names it, the answer as
  // given: deleting a tag alone is optional in the distribution spec (tag_deletion.hpp reads it).
  [[nodiscard]] Result<Response> delete_reference(const Reference& reference);

  // Pushes a plan (plan_push_to reads one from a layout): blobs from `plan.layout`, from memory, or
  // for those in `external` skipped, mounted or relayed (each once); then every variant manifest
  // with its tag; then the root beside the referrers.
  [[nodiscard]] Result<PushSummary> push_plan(PushPlan plan, const Reference& destination,
                                              const ExternalBlobs& external = {});
  // Puts the manifest `source` names under each new tag, bytes unchanged; returns its digest.
  [[nodiscard]] Result<oci::Digest> tag(const Reference& source, const std::vector<std::string>& new_tags);

  // Whether the registry can be used with the configured credentials: /v2/ answers 200 over the
  // scheme it needs (TLS verified), after its auth challenge (`serve` checking its upstreams).
  [[nodiscard]] Result<void> check_registry(const std::string& registry);
  // Checks that the registry accepts these credentials (before `hwimg login` stores them).
  [[nodiscard]] Result<void> check_login(const std::string& registry, const Credentials& credentials);

  [[nodiscard]] std::uint64_t requests() const;

  // For a mirror: the requests that follow carry the Authorization header its own client sent,
  // unchanged, and a 401 is answered as it came; nullopt: this client's own credentials again.
  void forward_authorization(std::optional<std::string> header);

  // GET or HEAD of /v2/<repository>/<path> ("manifests/<ref>", "blobs/<digest>", "tags/list",
  // "referrers/<digest>") with extra request `headers`, redirects followed; the answer as given,
  // its body up to `max_body` bytes.
  [[nodiscard]] Result<Response> forward(const Reference& repository, ReadMethod method, std::string_view path,
                                       const std::vector<std::string>& headers, std::size_t max_body);
  // The same for several paths, asked all at once; the answers in the order of `paths`.
  [[nodiscard]] Result<std::vector<Response>> forward_all(const Reference& repository, ReadMethod method,
                                                        const std::vector<std::string>& paths,
                                                        const std::vector<std::string>& headers, std::size_t max_body);
  // The same, except that a successful GET's body is streamed: read it with next_chunk(), which
  // receives only as fast as it is called. One stream at a time; opening another abandons it.
  [[nodiscard]] Result<Response> open_stream(const Reference& repository, ReadMethod method, std::string_view path,
                                           const std::vector<std::string>& headers);
  // The next piece of the streamed body; nullopt at its end; an error when the transfer broke.
  [[nodiscard]] Result<std::optional<std::string>> next_chunk();
  // Bytes of the streamed body received and not yet taken by next_chunk(): at most 256 KiB and a
  // piece, whatever the reader's pace.
  [[nodiscard]] std::size_t read_ahead() const;

  // GET of a blob, its body handed to `on_piece` as it arrives and checked against `digest` (and
  // `size`, when known) by a VerifiedStream: the last piece only once the whole body matched.
  // An error of `on_piece` stops the transfer. (registry/verified_stream.cpp)
  [[nodiscard]] Result<void> read_blob(const Reference& repository, const oci::Digest& digest,
                                       std::optional<std::uint64_t> size,
                                       const std::function<Result<void>(std::string_view)>& on_piece);

private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace hwimg::registry
