#pragma once
// The referrers attached to an index and its variants (NFD compatibility artifacts, signatures,
// SBOMs), as `inspect` lists them under their subject: found through the reader, a registry's
// referrers API or tag, a layout's index.json (docs/nfd.md#referrers).

#include <map>
#include <string>
#include <vector>

#include "hwimg/image/reader.hpp"
#include "hwimg/oci/descriptor.hpp"

namespace hwimg::inspect {

// Each subject's referrers, as a referrers list describes them: digest, size, artifactType (else
// the config's media type) and annotations; in the order the reader gave them.
using ReferrersBySubject = std::map<oci::Digest, std::vector<oci::Descriptor>>;

// The referrers of `subjects`, read in one round (`ImageReader::referrers`), each parsed as an
// image manifest and put under the subject it names.
[[nodiscard]] Result<ReferrersBySubject> attached_referrers(image::ImageReader& reader,
                                                           const std::vector<oci::Digest>& subjects);

}  // namespace hwimg::inspect
