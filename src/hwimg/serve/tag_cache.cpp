#include "hwimg/serve/tag_cache.hpp"

namespace hwimg::serve {

TagCache::TagCache(std::chrono::milliseconds ttl, Now now) : m_ttl(ttl), m_now(std::move(now)) {}

Result<SharedOutcome> TagCache::get(const std::string& key, const std::function<Result<SharedOutcome>()>& fetch) {
  {
    std::lock_guard lock(m_mutex);
    if (auto outcome = kept(key)) return *outcome;
  }
  return m_fetches.get(key, [&]() -> Result<SharedOutcome> {
    std::uint64_t generation = 0;
    {
      // A fetch that ended since the look above has kept its answer.
      std::lock_guard lock(m_mutex);
      if (auto outcome = kept(key)) return *outcome;
      generation = m_generation;
    }
    auto result = fetch();
    if (result && (*result)->answer) {
      std::lock_guard lock(m_mutex);
      if (generation == m_generation) {
        const auto now = m_now();
        if (++m_inserted % 256 == 0 || m_entries.size() >= max_entries) sweep(now);
        m_entries.insert_or_assign(key, Entry{*result, now});
      }
    }
    return result;
  });
}

std::optional<SharedOutcome> TagCache::find(const std::string& key) const {
  std::lock_guard lock(m_mutex);
  return kept(key);
}

std::optional<SharedOutcome> TagCache::kept(const std::string& key) const {
  const auto it = m_entries.find(key);
  if (it == m_entries.end() || m_now() - it->second.stored >= m_ttl) return std::nullopt;
  return it->second.outcome;
}

void TagCache::sweep(std::chrono::steady_clock::time_point now) {
  std::erase_if(m_entries, [&](const auto& entry) {
    return now - entry.second.stored >= m_ttl || m_entries.size() >= max_entries;
  });
}

void TagCache::clear() {
  {
    std::lock_guard lock(m_mutex);
    m_entries.clear();
    ++m_generation;
  }
  m_fetches.clear();
}

std::size_t TagCache::size() const {
  std::lock_guard lock(m_mutex);
  return m_entries.size();
}

}  // namespace hwimg::serve
