#include "hwimg/serve/manifest_cache.hpp"

namespace hwimg::serve {

std::optional<std::string> ManifestCache::find(const std::string& key) const {
  std::lock_guard lock(m_mutex);
  const auto it = m_manifests.find(key);
  if (it == m_manifests.end()) return std::nullopt;
  return it->second;
}

void ManifestCache::keep(const std::string& key, const std::string& bytes) {
  if (bytes.size() > m_capacity) return;
  std::lock_guard lock(m_mutex);
  if (m_manifests.contains(key)) return;
  while (m_bytes + bytes.size() > m_capacity && !m_order.empty()) {
    const auto oldest = m_manifests.find(m_order.front());
    m_bytes -= oldest->second.size();
    m_manifests.erase(oldest);
    m_order.pop_front();
  }
  m_manifests.emplace(key, bytes);
  m_order.push_back(key);
  m_bytes += bytes.size();
}

std::size_t ManifestCache::size() const {
  std::lock_guard lock(m_mutex);
  return m_manifests.size();
}

}  // namespace hwimg::serve
