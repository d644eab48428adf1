#pragma once
// Tag outcomes kept for the --ttl, and one upstream fetch shared by every request for a tag that
// arrives while it runs (200 kubelets asking at once cost the upstream one index).

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "hwimg/registry/client.hpp"
#include "hwimg/serve/tag_answer.hpp"
#include "hwimg/util/single_flight.hpp"

namespace hwimg::serve {

struct TagOutcome {
  std::optional<TagAnswer> answer;           // the upstream served the tag: judged for this node
  std::optional<registry::Response> upstream;  // it answered otherwise (401, 404, ...): passed on as is
};
using SharedOutcome = std::shared_ptr<const TagOutcome>;

class TagCache {
public:
  using Now = std::function<std::chrono::steady_clock::time_point()>;
  TagCache(std::chrono::milliseconds ttl, Now now);

  // The outcome kept for `key`, else what `fetch` gives. Only judged answers are kept: an
  // upstream's 401 or 404 is asked again next time.
  [[nodiscard]] Result<SharedOutcome> get(const std::string& key, const std::function<Result<SharedOutcome>()>& fetch);
  // The outcome kept for `key`, without fetching: never blocks on an upstream.
  [[nodiscard]] std::optional<SharedOutcome> find(const std::string& key) const;
  // Forgets everything, including fetches under way (the node's facts changed).
  void clear();
  [[nodiscard]] std::size_t size() const;

private:
  struct Entry {
    SharedOutcome outcome;
    std::chrono::steady_clock::time_point stored;
  };
  // The answer kept for `key` and not yet expired; the caller holds m_mutex.
  [[nodiscard]] std::optional<SharedOutcome> kept(const std::string& key) const;
  // Drops what has expired (a client that forwards a fresh token with every pull leaves one entry
  // per token behind), and everything kept beyond `max_entries`.
  void sweep(std::chrono::steady_clock::time_point now);
  static constexpr std::size_t max_entries = 4096;

  std::chrono::milliseconds m_ttl;
  Now m_now;
  std::size_t m_inserted = 0;
  mutable std::mutex m_mutex;
  std::map<std::string, Entry> m_entries;
  std::uint64_t m_generation = 0;  // counts clear(): a fetch that began before one is not kept
  // Answers are kept above, for the TTL, so a fetch is shared only while it runs.
  util::SingleFlight<std::string, SharedOutcome> m_fetches{util::Keep::nothing};
};

}  // namespace hwimg::serve
