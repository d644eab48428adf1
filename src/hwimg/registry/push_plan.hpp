#pragma once
// What a push sends, verified before anything goes out: the unique blobs, the variant manifests
// with their tags, the root (the index, or a single manifest) last, and the referrers of what it
// pushes (NFD compatibility artifacts, signatures). Made from an image layout (`hwimg push`) or
// from documents already read elsewhere (`hwimg copy`).

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::registry {

struct PlannedManifest {
  oci::Descriptor descriptor;
  std::string bytes;
  std::string tag;  // where it goes on the registry; empty: by digest only
};

struct PushPlan {
  std::filesystem::path layout;               // where blobs are read; empty: every blob is external
  std::vector<oci::Descriptor> blobs;         // unique by digest, largest first
  std::vector<PlannedManifest> manifests;     // variant manifests (empty for a single image)
  PlannedManifest root;                       // the index (or the single manifest), pushed last
  // Manifests whose `subject` is one of the above, put beside the root and listed where the
  // registry lacks the referrers API (docs/nfd.md#referrers); a failed one does not fail the push.
  std::vector<PlannedManifest> referrers;
  std::map<oci::Digest, std::string> inline_blobs;  // small blobs made in memory (an artifact's config and spec)

  // Adds a variant manifest (or, for a single image, the root's own manifest) and its config and
  // layers to `blobs`; checks the manifest's JSON and the tag's grammar.
  [[nodiscard]] Result<void> add_manifest(PlannedManifest manifest);
  // Adds the config and layers of `manifest` to `blobs`, each once.
  void add_blobs_of(const oci::Manifest& manifest);
  // Adds an image manifest that has a `subject` (its blobs too), once; its descriptor carries the
  // artifactType (else the config's media type) and annotations, as a referrers list does.
  [[nodiscard]] Result<void> add_referrer(std::string bytes);
  // Keeps `bytes` in memory to be pushed as a blob (add_referrer lists it among `blobs`).
  void add_inline_blob(std::string bytes);
  // Orders `blobs` largest first, so the long uploads start first.
  void order_blobs();

  // A plan from documents already read: the root (an index, or a single image's manifest) and, for
  // an index, the variant manifests that go with it (with their tags). `what` says what is done
  // in errors ("copy REF", "plan the push of DIR"); an index entry that is not an image manifest
  // is refused (nested indexes are not supported).
  [[nodiscard]] static Result<PushPlan> from_documents(std::string_view what, PlannedManifest root,
                                                       std::vector<PlannedManifest> variants);
};

// Reads `oci:layout_dir:tag`. `destination_tag` names the root on the registry; each variant
// manifest the layout tags `<tag>-<id>` goes up as `<destination_tag>-<id>`; the referrers the
// layout lists for them come along. A blob missing from the layout is an error unless it is `external`.
[[nodiscard]] Result<PushPlan> plan_push(const std::filesystem::path& layout_dir, std::string_view tag,
                                         std::string_view destination_tag, const std::set<oci::Digest>& external = {});

// plan_push for `destination` (REGISTRY/REPO[:TAG]): its tag, else the layout's, else "latest",
// names the root; a digest is refused (it comes from the content).
[[nodiscard]] Result<PushPlan> plan_push_to(const std::filesystem::path& layout_dir, std::string_view tag,
                                            const Reference& destination, const std::set<oci::Digest>& external = {});

}  // namespace hwimg::registry
