#pragma once
// One way to read images wherever they are: an OCI layout, a registry, or memory (unit tests).
// Readers resolve a tag or digest to the index or manifest it names and read what a descriptor
// points at, verified against the descriptor and bounded by oci::document_limit.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::image {

// A tag of a source and, where its listing tells, the digest it names.
struct ListedTag {
  std::string name;
  std::optional<oci::Digest> digest;  // a layout's index.json tells; a registry's tag list does not
};

class ImageReader {
public:
  ImageReader() = default;
  ImageReader(const ImageReader&) = delete;
  ImageReader& operator=(const ImageReader&) = delete;
  virtual ~ImageReader() = default;

  // "oci:DIR" or "registry/repository", as references and messages name the source.
  [[nodiscard]] virtual std::string name() const = 0;

  // The index or manifest that `tag` (or "sha256:..." for a digest) names. An empty tag names the
  // only image of a layout, and "latest" on a registry.
  [[nodiscard]] virtual Result<oci::Descriptor> resolve(std::string_view tag_or_digest) = 0;

  // The bytes of an index, manifest or config, checked against the descriptor's size and digest.
  [[nodiscard]] virtual Result<std::string> read(const oci::Descriptor& descriptor) = 0;

  // read() of each, in order; a registry asks for them all at once.
  [[nodiscard]] virtual Result<std::vector<std::string>> read_all(const std::vector<oci::Descriptor>& descriptors) {
    std::vector<std::string> out;
    for (const auto& descriptor : descriptors) {
      HWIMG_TRY_ASSIGN(auto bytes, read(descriptor));
      out.push_back(std::move(bytes));
    }
    return out;
  }

  // Writes the blob (a layer) to `destination`, which must not exist, as it arrives, checking its
  // size and digest; nothing is left at `destination` when it fails.
  [[nodiscard]] virtual Result<void> copy_blob(const oci::Descriptor& descriptor,
                                               const std::filesystem::path& destination) = 0;

  // The file holding blob `digest` when the source keeps blobs on this machine (a layout), so a
  // layer can be hard-linked rather than copied; nullopt otherwise. Its content is not verified.
  [[nodiscard]] virtual std::optional<std::filesystem::path> local_blob(const oci::Digest& digest) const = 0;

  // The referrers of `subjects` (NFD artifacts, signatures, SBOMs: image manifests whose `subject`
  // is one of them), each manifest's bytes as stored, verified: found through a registry's
  // referrers API or tag, or among a layout's index.json entries (docs/nfd.md#referrers).
  // Referrers of referrers are not followed.
  [[nodiscard]] virtual Result<std::vector<std::string>> referrers(const std::vector<oci::Digest>& subjects) = 0;

  // Up to `limit` of the source's tags, in one read: a layout's index.json entries with their
  // digests, a registry's first page of its tag list (one request). A source that cannot list tags
  // lists none.
  [[nodiscard]] virtual Result<std::vector<ListedTag>> list_tags(std::size_t /*limit*/) {
    return std::vector<ListedTag>{};
  }

  // What `docker run`, skopeo or umoci take for the manifest `digest`: "registry/repo@sha256:...",
  // or for a layout one of its tags (`preferred_tag` when it has it).
  [[nodiscard]] virtual std::string pinned_reference(const oci::Digest& digest,
                                                     std::string_view preferred_tag) const = 0;
};

}  // namespace hwimg::image
