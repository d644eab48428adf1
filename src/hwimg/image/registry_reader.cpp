#include "hwimg/image/registry_reader.hpp"

#include "hwimg/image/blob_sink.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/referrers.hpp"

namespace hwimg::image {

RegistryReader::RegistryReader(registry::Client& client, registry::Reference repository)
    : m_client(client), m_repository(std::move(repository)) {
  m_repository.tag.clear();
  m_repository.digest.reset();
}

RegistryReader::RegistryReader(std::unique_ptr<registry::Client> client, registry::Reference repository)
    : RegistryReader(*client, std::move(repository)) {
  m_owned = std::move(client);
}

std::string RegistryReader::name() const {
  return m_repository.name();
}

Result<registry::FetchedManifest> RegistryReader::fetch(std::string_view tag_or_digest) {
  auto reference = m_repository;
  if (tag_or_digest.starts_with("sha256:")) {
    HWIMG_TRY_ASSIGN(reference.digest, oci::Digest::parse(tag_or_digest));
  } else {
    reference.tag = std::string(tag_or_digest);
  }
  HWIMG_TRY_ASSIGN(auto fetched, m_client.get_manifest(reference));
  m_documents.insert_or_assign(fetched.digest, fetched.bytes);
  return fetched;
}

Result<oci::Descriptor> RegistryReader::resolve(std::string_view tag_or_digest) {
  HWIMG_TRY_ASSIGN(auto fetched, fetch(tag_or_digest));
  return oci::Descriptor{fetched.media_type, fetched.digest, static_cast<std::int64_t>(fetched.bytes.size()), {}, {}};
}

Result<std::string> RegistryReader::read(const oci::Descriptor& descriptor) {
  std::string bytes;
  if (const auto known = m_documents.find(descriptor.digest); known != m_documents.end()) {
    bytes = known->second;
  } else if (oci::media_type::is_index(descriptor.media_type) || oci::media_type::is_manifest(descriptor.media_type)) {
    HWIMG_TRY_ASSIGN(auto fetched, fetch(descriptor.digest.str()));
    bytes = std::move(fetched.bytes);
  } else {
    HWIMG_TRY_ASSIGN(bytes, m_client.get_blob(m_repository, descriptor.digest, oci::document_limit(descriptor)));
  }
  HWIMG_TRY(oci::verify_content(descriptor, bytes, name()));
  return bytes;
}

Result<void> RegistryReader::copy_blob(const oci::Descriptor& descriptor, const std::filesystem::path& destination) {
  HWIMG_TRY_ASSIGN(auto sink, BlobSink::create(destination, descriptor));
  HWIMG_TRY(m_client.read_blob(m_repository, descriptor.digest, static_cast<std::uint64_t>(descriptor.size),
                               [&sink](std::string_view piece) { return sink.write(piece); }));
  return with_context(sink.finish(), fmt::format("failed to get blob {} from {}", descriptor.digest.str(), name()));
}

Result<std::vector<std::string>> RegistryReader::referrers(const std::vector<oci::Digest>& subjects) {
  // Subjects not read yet are read in the same round as their referrers lists: a copy needs both.
  auto paths = registry::referrers_paths(subjects, "");
  std::vector<registry::Reference> unread;
  for (const auto& subject : subjects) {
    if (m_documents.contains(subject)) continue;
    unread.push_back(at_digest(subject));
    paths.push_back("manifests/" + subject.str());
  }
  HWIMG_TRY_ASSIGN(auto answers, m_client.forward_all(m_repository, registry::ReadMethod::get, paths,
                                                      {registry::manifest_accept_header()}, oci::max_manifest_size));
  const auto lists_end = static_cast<std::ptrdiff_t>(answers.size() - unread.size());
  for (std::size_t i = 0; i < unread.size(); ++i) {
    HWIMG_TRY_ASSIGN(const auto manifest,
                     registry::manifest_from_answer(answers[static_cast<std::size_t>(lists_end) + i], unread[i]));
    m_documents.insert_or_assign(manifest.digest, manifest.bytes);
  }
  answers.erase(answers.begin() + lists_end, answers.end());
  HWIMG_TRY_ASSIGN(const auto lists, registry::referrers_from_answers(m_repository, subjects, "", answers));
  std::vector<registry::Reference> wanted;
  for (const auto& found : lists) {
    for (const auto& descriptor : found) {
      // Only image manifests can carry a subject; anything else listed is not one to read.
      if (oci::media_type::is_manifest(descriptor.media_type)) wanted.push_back(at_digest(descriptor.digest));
    }
  }
  HWIMG_TRY_ASSIGN(auto manifests, m_client.get_manifests(wanted));
  std::vector<std::string> out;
  for (auto& manifest : manifests) {
    m_documents.insert_or_assign(manifest.digest, manifest.bytes);
    out.push_back(std::move(manifest.bytes));
  }
  return out;
}

Result<std::vector<std::string>> RegistryReader::read_all(const std::vector<oci::Descriptor>& descriptors) {
  std::vector<registry::Reference> unread;
  for (const auto& descriptor : descriptors) {
    const bool document = oci::media_type::is_index(descriptor.media_type) ||
                          oci::media_type::is_manifest(descriptor.media_type);
    if (document && !m_documents.contains(descriptor.digest)) unread.push_back(at_digest(descriptor.digest));
  }
  HWIMG_TRY_ASSIGN(auto fetched, m_client.get_manifests(unread));
  for (auto& manifest : fetched) m_documents.insert_or_assign(manifest.digest, std::move(manifest.bytes));
  std::vector<std::string> out;
  for (const auto& descriptor : descriptors) {
    HWIMG_TRY_ASSIGN(auto bytes, read(descriptor));
    out.push_back(std::move(bytes));
  }
  return out;
}

Result<std::vector<ListedTag>> RegistryReader::list_tags(std::size_t limit) {
  HWIMG_TRY_ASSIGN(const auto names, m_client.list_tags(m_repository, limit, registry::TagPages::first));
  std::vector<ListedTag> out;
  for (const auto& name : names) {
    if (out.size() == limit) break;
    out.push_back({name, std::nullopt});
  }
  return out;
}

registry::Reference RegistryReader::at_digest(const oci::Digest& digest) const {
  auto reference = m_repository;
  reference.digest = digest;
  return reference;
}

std::string RegistryReader::pinned_reference(const oci::Digest& digest, std::string_view) const {
  return m_repository.name() + "@" + digest.str();
}

}  // namespace hwimg::image
