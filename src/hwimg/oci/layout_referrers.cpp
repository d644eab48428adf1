#include "hwimg/oci/layout_referrers.hpp"

#include <algorithm>
#include <set>

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"

namespace hwimg::oci {

Result<std::vector<std::string>> layout_referrers(const Layout& layout, const std::vector<Digest>& subjects) {
  const auto what = "failed to find the referrers in " + layout.root().string();
  HWIMG_TRY_ASSIGN(const auto index_json, with_context(layout.read_index_json(), what));
  std::vector<std::string> out;
  std::set<Digest> seen;
  for (const auto& listed : index_json.manifests) {
    // Only an OCI image manifest can have a subject; the subjects themselves are not read twice.
    if (listed.media_type != media_type::manifest || !seen.insert(listed.digest).second ||
        std::ranges::find(subjects, listed.digest) != subjects.end()) {
      continue;
    }
    HWIMG_TRY_ASSIGN(auto bytes, with_context(layout.read_blob(listed), what));
    HWIMG_TRY_ASSIGN(const auto manifest, with_context(parse_manifest(bytes),
                                                       fmt::format("{}: manifest {}", what, listed.digest.str())));
    if (manifest.subject && std::ranges::find(subjects, manifest.subject->digest) != subjects.end()) {
      out.push_back(std::move(bytes));
    }
  }
  return out;
}

}  // namespace hwimg::oci
