#include "hwimg/oci/descriptor.hpp"

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

}  // namespace hwimg::oci
