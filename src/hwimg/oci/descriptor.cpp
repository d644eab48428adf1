#include "hwimg/oci/descriptor.hpp"

#include "hwimg/oci/media_types.hpp"

namespace hwimg::oci {

std::string Platform::str() const {
  auto text = os + "/" + architecture;
  if (!variant.empty()) {
    text += "/" + variant;
  }
  return text;
}

std::optional<std::string> Descriptor::annotation(std::string_view key) const {
  if (const auto it = annotations.find(std::string(key)); it != annotations.end()) {
    return it->second;
  }
  return std::nullopt;
}

std::size_t document_limit(const Descriptor& descriptor) {
  const auto& type = descriptor.media_type;
  return media_type::is_index(type) || media_type::is_manifest(type) ? max_manifest_size : max_config_size;
}

Result<void> verify_content(const Descriptor& descriptor, std::string_view bytes, std::string_view source) {
  if (static_cast<std::int64_t>(bytes.size()) != descriptor.size) {
    return fail("failed to read blob {} from {}: size is {} bytes, descriptor says {}", descriptor.digest.str(), source,
                bytes.size(), descriptor.size);
  }
  if (const auto actual = Digest::sha256_of(bytes); actual != descriptor.digest) {
    return fail("failed to read blob {} from {}: digest mismatch, content hashes to {}", descriptor.digest.str(),
                source, actual.str());
  }
  return {};
}

}  // namespace hwimg::oci
