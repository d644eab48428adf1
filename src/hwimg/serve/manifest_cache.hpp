#pragma once
// Variant manifests the mirror has served, by upstream, repository and digest. Content named by its
// digest never changes, so a tag of an index seen before (`1.0` after `latest`, or the same tag once
// its --ttl ran out) costs the upstream the index alone, not the index and then the variant. The
// bytes are verified against the digest again whenever they are used (image::RegistryReader).

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace hwimg::serve {

class ManifestCache {
public:
  // At most `capacity` bytes of manifests; the oldest go first.
  explicit ManifestCache(std::size_t capacity) : m_capacity(capacity) {}

  [[nodiscard]] std::optional<std::string> find(const std::string& key) const;
  void keep(const std::string& key, const std::string& bytes);
  [[nodiscard]] std::size_t size() const;

private:
  mutable std::mutex m_mutex;
  std::size_t m_capacity;
  std::size_t m_bytes = 0;
  std::map<std::string, std::string> m_manifests;
  std::deque<std::string> m_order;  // keys, oldest first
};

}  // namespace hwimg::serve
