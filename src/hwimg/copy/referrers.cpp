#include "hwimg/copy/referrers.hpp"

#include <algorithm>
#include <set>

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/referrers.hpp"

namespace hwimg::copy {

Result<std::vector<registry::FetchedManifest>> find_referrers(registry::Client& client,
                                                              const registry::Reference& source,
                                                              const std::vector<oci::Digest>& subjects) {
  std::vector<registry::FetchedManifest> out;
  for (const auto& subject : subjects) {
    HWIMG_TRY_ASSIGN(const auto found, registry::list_referrers(client, source, subject, ""));
    for (const auto& descriptor : found) {
      // Only image manifests with a subject are referrers a registry can take back.
      if (!oci::media_type::is_manifest(descriptor.media_type)) continue;
      auto by_digest = source;
      by_digest.tag.clear();
      by_digest.digest = descriptor.digest;
      HWIMG_TRY_ASSIGN(auto manifest, client.get_manifest(by_digest));
      out.push_back(std::move(manifest));
    }
  }
  return out;
}

Result<std::vector<std::string>> find_layout_referrers(const oci::Layout& layout,
                                                       const std::vector<oci::Digest>& subjects) {
  const auto what = "failed to find the referrers in " + layout.root().string();
  HWIMG_TRY_ASSIGN(const auto index_json, with_context(layout.read_index_json(), what));
  std::vector<std::string> out;
  std::set<oci::Digest> seen;
  for (const auto& listed : index_json.manifests) {
    // Only an OCI image manifest can have a subject; the subjects themselves are not read twice.
    if (listed.media_type != oci::media_type::manifest || !seen.insert(listed.digest).second ||
        std::ranges::find(subjects, listed.digest) != subjects.end()) {
      continue;
    }
    HWIMG_TRY_ASSIGN(auto bytes, with_context(layout.read_blob(listed), what));
    HWIMG_TRY_ASSIGN(const auto manifest, with_context(oci::parse_manifest(bytes),
                                                       fmt::format("{}: manifest {}", what, listed.digest.str())));
    if (manifest.subject && std::ranges::find(subjects, manifest.subject->digest) != subjects.end()) {
      out.push_back(std::move(bytes));
    }
  }
  return out;
}

}  // namespace hwimg::copy
