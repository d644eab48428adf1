#pragma once
// One computation per key however many threads ask for it at once: the first caller computes,
// the callers that arrive while it runs wait and share its result (the same base image opened
// once, the same tag fetched once for 200 kubelets). What stays for later callers is the owner's
// choice, `Keep`.

#include <cstdint>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::util {

// Which finished results later callers get without computing them again.
enum class Keep {
  nothing,     // shared only by the callers that arrived while it ran; the owner keeps what it wants
  successes,   // a value is computed once; a failure settles its waiters, and the next caller tries again
  everything,  // a failure too: for work whose failure another try would only repeat (one build's bases)
};

template <typename Key, typename T>
class SingleFlight {
public:
  explicit SingleFlight(Keep keep = Keep::successes) : m_keep(keep) {}

  // The result for `key`: a kept one, the one another thread is computing (waited for), else
  // `make()`'s, computed on this thread. A `make` that throws settles the waiters with its exception,
  // rethrown to each of them, and is never kept.
  template <typename Make>
  Result<T> get(const Key& key, Make&& make) {
    std::promise<Result<T>> promise;
    Flight flight;
    bool owner = false;
    {
      std::lock_guard lock(m_mutex);
      if (const auto found = m_flights.find(key); found != m_flights.end()) {
        flight = found->second;
      } else {
        flight = {promise.get_future().share(), ++m_started};
        m_flights.emplace(key, flight);
        owner = true;
      }
    }
    if (!owner) return flight.result.get();
    try {
      Result<T> result = std::forward<Make>(make)();
      const bool kept = m_keep == Keep::everything || (m_keep == Keep::successes && result.has_value());
      if (!kept) forget(key, flight.id);
      promise.set_value(result);
      return result;
    } catch (...) {
      forget(key, flight.id);
      promise.set_exception(std::current_exception());
      throw;
    }
  }

  // Every value kept so far, in key order, waiting for those still being computed.
  [[nodiscard]] std::vector<T> values() {
    std::vector<std::shared_future<Result<T>>> results;
    {
      std::lock_guard lock(m_mutex);
      for (const auto& [key, flight] : m_flights) results.push_back(flight.result);
    }
    std::vector<T> values;
    for (const auto& result : results) {
      if (const auto& value = result.get()) values.push_back(*value);
    }
    return values;
  }

  // Forgets every kept result and every computation under way: the next caller computes again, and
  // what a computation under way gives reaches only its own callers.
  void clear() {
    std::lock_guard lock(m_mutex);
    m_flights.clear();
  }

private:
  struct Flight {
    std::shared_future<Result<T>> result;
    std::uint64_t id = 0;  // tells this computation from a later one for the same key after clear()
  };

  void forget(const Key& key, std::uint64_t id) {
    std::lock_guard lock(m_mutex);
    if (const auto found = m_flights.find(key); found != m_flights.end() && found->second.id == id) {
      m_flights.erase(found);
    }
  }

  Keep m_keep;
  std::mutex m_mutex;
  std::map<Key, Flight> m_flights;
  std::uint64_t m_started = 0;
};

}  // namespace hwimg::util
