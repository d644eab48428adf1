#pragma once
// An OCI image layout on disk (oci-layout, index.json, blobs/sha256/...).
// Blobs are written atomically and never rewritten; index.json changes happen under a lock, so
// concurrent builds into one layout both land, and a killed writer leaves a valid layout.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "hwimg/oci/documents.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::oci {

enum class OpenMode { existing, create };

class Layout {
public:
  [[nodiscard]] static Result<Layout> open(const std::filesystem::path& root, OpenMode mode = OpenMode::existing);

  [[nodiscard]] const std::filesystem::path& root() const { return m_root; }
  [[nodiscard]] std::filesystem::path blob_path(const Digest& digest) const;
  [[nodiscard]] bool has_blob(const Digest& digest) const;

  // Stores `data` unless a blob with its digest exists; returns its descriptor.
  [[nodiscard]] Result<Descriptor> put_blob(std::string_view data, std::string_view media_type) const;
  // Moves a finished temporary file (from temporary_file()) into place as the blob `digest`.
  [[nodiscard]] Result<void> adopt_blob(const std::filesystem::path& temporary, const Digest& digest) const;
  // A path for a blob being written; same filesystem as blobs/, so adopt_blob is a rename.
  [[nodiscard]] std::filesystem::path temporary_file(std::string_view purpose) const;
  // hwimg's private working area inside the layout (caches, temporary files, the lock).
  [[nodiscard]] std::filesystem::path state_directory() const { return m_root / ".hwimg"; }

  // Reads a document blob (oci::document_limit bounds its size), checking its size and digest
  // against the descriptor; only a regular file, and never more bytes than the descriptor says.
  [[nodiscard]] Result<std::string> read_blob(const Descriptor& descriptor) const;
  // index.json, a regular file of at most 64 MiB.
  [[nodiscard]] Result<Index> read_index_json() const;

  // Runs `change` on index.json under the layout lock and writes the result atomically.
  [[nodiscard]] Result<void> update_index_json(const std::function<Result<void>(Index&)>& change) const;

  // The descriptor tagged `tag` in index.json; with an empty tag, the only descriptor.
  [[nodiscard]] Result<Descriptor> resolve(std::string_view tag) const;

private:
  explicit Layout(std::filesystem::path root) : m_root(std::move(root)) {}
  std::filesystem::path m_root;
};

// "oci:DIR[:TAG]" split as skopeo does, at the first ':' after the prefix; or "oci:DIR@sha256:..."
// for an image of the layout by digest (what `hwimg select` prints for an untagged variant).
struct LayoutReference {
  std::filesystem::path directory;
  std::string tag;
  std::optional<Digest> digest;
};
[[nodiscard]] bool is_layout_reference(std::string_view text);
[[nodiscard]] Result<LayoutReference> parse_layout_reference(std::string_view text);

// Checks a tag against the image spec's ref.name grammar (skopeo and umoci enforce it).
[[nodiscard]] Result<void> validate_tag(std::string_view tag);

}  // namespace hwimg::oci
