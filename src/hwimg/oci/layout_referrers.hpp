#pragma once
// The referrers a layout holds (NFD compatibility artifacts, signatures, SBOMs): image manifests
// listed in its index.json, untagged as oras-go's layout store and `hwimg copy` keep them, whose
// `subject` names another manifest (docs/nfd.md#referrers).

#include <string>
#include <vector>

#include "hwimg/oci/digest.hpp"
#include "hwimg/oci/layout.hpp"

namespace hwimg::oci {

// The bytes of each OCI image manifest listed in `layout`'s index.json (tagged or not, each once)
// whose `subject` is one of `subjects`, read verified, in index.json's order.
[[nodiscard]] Result<std::vector<std::string>> layout_referrers(const Layout& layout,
                                                                const std::vector<Digest>& subjects);

}  // namespace hwimg::oci
