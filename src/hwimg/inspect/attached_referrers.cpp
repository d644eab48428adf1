#include "hwimg/inspect/attached_referrers.hpp"

#include <algorithm>

#include "hwimg/oci/documents.hpp"

namespace hwimg::inspect {

Result<ReferrersBySubject> attached_referrers(image::ImageReader& reader, const std::vector<oci::Digest>& subjects) {
  const auto what = "failed to list the referrers in " + reader.name();
  HWIMG_TRY_ASSIGN(const auto documents, with_context(reader.referrers(subjects), what));
  ReferrersBySubject out;
  for (const auto& bytes : documents) {
    const auto digest = oci::Digest::sha256_of(bytes);
    HWIMG_TRY_ASSIGN(const auto manifest,
                     with_context(oci::parse_manifest(bytes), fmt::format("{}: manifest {}", what, digest.str())));
    if (!manifest.subject || std::ranges::find(subjects, manifest.subject->digest) == subjects.end()) continue;
    auto& listed = out[manifest.subject->digest];
    if (std::ranges::any_of(listed, [&](const oci::Descriptor& d) { return d.digest == digest; })) continue;
    // As distribution-spec 1.1's referrers list describes a manifest ("Listing Referrers").
    listed.push_back({manifest.media_type, digest, static_cast<std::int64_t>(bytes.size()), {},
                      manifest.annotations,
                      manifest.artifact_type.empty() ? manifest.config.media_type : manifest.artifact_type});
  }
  return out;
}

}  // namespace hwimg::inspect
