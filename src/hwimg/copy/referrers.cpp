#include "hwimg/copy/referrers.hpp"

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

}  // namespace hwimg::copy
