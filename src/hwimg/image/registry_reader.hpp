#pragma once
// An ImageReader over one repository of a registry: manifests by tag or digest (every OCI and
// Docker type accepted), configs as blobs. Documents already fetched are served from memory, so
// resolving a tag and then reading it costs one request.

#include <map>
#include <memory>

#include "hwimg/image/reader.hpp"
#include "hwimg/registry/client.hpp"

namespace hwimg::image {

class RegistryReader final : public ImageReader {
public:
  // Reads through `client`, which must outlive the reader.
  RegistryReader(registry::Client& client, registry::Reference repository);
  // Reads through a client of its own.
  RegistryReader(std::unique_ptr<registry::Client> client, registry::Reference repository);

  [[nodiscard]] std::string name() const override;
  [[nodiscard]] Result<oci::Descriptor> resolve(std::string_view tag_or_digest) override;
  [[nodiscard]] Result<std::string> read(const oci::Descriptor& descriptor) override;
  [[nodiscard]] Result<std::vector<std::string>> read_all(const std::vector<oci::Descriptor>& descriptors) override;
  [[nodiscard]] Result<void> copy_blob(const oci::Descriptor& descriptor,
                                       const std::filesystem::path& destination) override;
  [[nodiscard]] std::optional<std::filesystem::path> local_blob(const oci::Digest&) const override {
    return std::nullopt;
  }
  [[nodiscard]] Result<std::vector<std::string>> referrers(const std::vector<oci::Digest>& subjects) override;
  [[nodiscard]] Result<std::vector<ListedTag>> list_tags(std::size_t limit) override;
  [[nodiscard]] std::string pinned_reference(const oci::Digest& digest, std::string_view preferred_tag) const override;

  // The manifest as the registry served it (bytes, media type, digest) for a tag or digest.
  [[nodiscard]] Result<registry::FetchedManifest> fetch(std::string_view tag_or_digest);
  // A document fetched by other means (a mirror's own request), served from memory from now on.
  void remember(const registry::FetchedManifest& document) { m_documents.insert_or_assign(document.digest, document.bytes); }

private:
  [[nodiscard]] registry::Reference at_digest(const oci::Digest& digest) const;

  std::unique_ptr<registry::Client> m_owned;
  registry::Client& m_client;
  registry::Reference m_repository;
  std::map<oci::Digest, std::string> m_documents;  // fetched manifests and indexes by digest
};

}  // namespace hwimg::image
