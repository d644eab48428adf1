#include "hwimg/serve/tag_cache.hpp"

namespace hwimg::serve {

TagCache::TagCache(std::chrono::milliseconds ttl, Now now) : m_ttl(ttl), m_now(std::move(now)) {}

Result<SharedOutcome> TagCache::get(const std::string& key, const std::function<Result<SharedOutcome>()>& fetch) {
  std::promise<Result<SharedOutcome>> promise;
  std::optional<std::shared_future<Result<SharedOutcome>>> existing;
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(m_mutex);
    const auto it = m_entries.find(key);
    const bool expired = it != m_entries.end() && it->second.stored && m_now() - *it->second.stored >= m_ttl;
    if (it != m_entries.end() && !expired) {
      existing = it->second.outcome;
    } else {
      if (++m_inserted % 256 == 0 || m_entries.size() >= max_entries) sweep(m_now());
      generation = m_generation;
      m_entries.insert_or_assign(key, Entry{promise.get_future().share(), std::nullopt, generation});
    }
  }
  if (existing) return existing->get();
  auto result = fetch();
  promise.set_value(result);
  std::lock_guard lock(m_mutex);
  const auto it = m_entries.find(key);
  if (it != m_entries.end() && it->second.generation == generation) {
    if (result && (*result)->answer) {
      it->second.stored = m_now();
    } else {
      m_entries.erase(it);
    }
  }
  return result;
}

void TagCache::sweep(std::chrono::steady_clock::time_point now) {
  std::erase_if(m_entries, [&](const auto& entry) {
    const auto& stored = entry.second.stored;
    return stored && (now - *stored >= m_ttl || m_entries.size() >= max_entries);
  });
}

void TagCache::clear() {
  std::lock_guard lock(m_mutex);
  m_entries.clear();
  ++m_generation;
}

std::size_t TagCache::size() const {
  std::lock_guard lock(m_mutex);
  return m_entries.size();
}

}  // namespace hwimg::serve
