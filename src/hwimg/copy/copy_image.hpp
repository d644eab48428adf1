#pragma once
// `hwimg copy`: an image from a registry or a layout to a registry or a layout, with only the
// variants a fleet needs. Kept variant manifests are copied byte for byte (their digests do not
// change); an index loses the entries left out and gets a new digest. Between repositories of one
// registry blobs are mounted, from another registry streamed through, never stored here; the kept
// manifests' referrers (NFD artifacts, signatures, SBOMs) come along, to and from layouts too.

#include <cstdint>
#include <optional>
#include <string>

#include "hwimg/oci/digest.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/select/variant_filter.hpp"

namespace hwimg::copy {

struct CopyRequest {
  std::string source;       // oci:DIR[:TAG] or a registry reference
  std::string destination;  // oci:DIR[:TAG] or REGISTRY/REPO[:TAG]; the tag defaults to the source's
  select::VariantFilter filter;
  registry::ClientOptions registry;
};

struct CopySummary {
  std::string destination;              // "REGISTRY/REPO:TAG" or "oci:DIR:TAG"
  oci::Digest digest;                   // of the index (or single manifest) written there
  std::size_t variants_total = 0;
  std::size_t variants_kept = 0;
  std::optional<registry::PushSummary> pushed;  // a registry destination: what the push did
  std::size_t blobs_copied = 0;         // a layout destination: blobs written
  std::uint64_t bytes_copied = 0;
  std::size_t blobs_present = 0;        // a layout destination: blobs it had already
  std::size_t referrers = 0;            // referrer manifests carried along
};

[[nodiscard]] Result<CopySummary> copy_image(const CopyRequest& request);

}  // namespace hwimg::copy
