// Tag answers kept for the TTL and shared by concurrent requests; upstream answers (401, 404) never
// kept; a change of the node's facts forgets everything, fetches under way included.

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "hwimg/serve/tag_cache.hpp"

using namespace hwimg;
using namespace std::chrono_literals;

namespace {

struct Clock {
  std::chrono::steady_clock::time_point now{};
  serve::TagCache::Now function() {
    return [this] { return now; };
  }
};

serve::SharedOutcome judged(std::string variant) {
  serve::TagOutcome outcome;
  outcome.answer = serve::TagAnswer{};
  outcome.answer->variant = std::move(variant);
  return std::make_shared<const serve::TagOutcome>(std::move(outcome));
}

// A fetch that answers v1, v2, ... and counts its calls.
struct CountingFetch {
  int calls = 0;
  Result<serve::SharedOutcome> operator()() {
    ++calls;
    return judged("v" + std::to_string(calls));
  }
};

serve::SharedOutcome upstream(long status) {
  serve::TagOutcome outcome;
  outcome.upstream = registry::Response{};
  outcome.upstream->status = status;
  return std::make_shared<const serve::TagOutcome>(std::move(outcome));
}

}  // namespace

TEST_CASE("an answer is kept for the TTL, then fetched again") {
  Clock clock;
  serve::TagCache cache(60s, clock.function());
  CountingFetch counting;
  const auto fetch = [&] { return counting(); };
  CHECK((*cache.get("k", fetch))->answer->variant == "v1");
  clock.now += 59s;
  CHECK((*cache.get("k", fetch))->answer->variant == "v1");
  CHECK(counting.calls == 1);
  clock.now += 1s;
  CHECK((*cache.get("k", fetch))->answer->variant == "v2");
  CHECK(counting.calls == 2);
  CHECK((*cache.get("other", fetch))->answer->variant == "v3");
}

TEST_CASE("upstream answers and errors are not kept") {
  Clock clock;
  serve::TagCache cache(60s, clock.function());
  int fetches = 0;
  const auto unauthorized = [&] {
    ++fetches;
    return Result<serve::SharedOutcome>(upstream(401));
  };
  CHECK((*cache.get("k", unauthorized))->upstream->status == 401);
  CHECK((*cache.get("k", unauthorized))->upstream->status == 401);
  CHECK(fetches == 2);
  const auto broken = [&] {
    ++fetches;
    return Result<serve::SharedOutcome>(fail("upstream down"));
  };
  CHECK(cache.get("e", broken).error().message == "upstream down");
  CHECK_FALSE(cache.get("e", broken));
  CHECK(fetches == 4);
  CHECK(cache.size() == 0);
}

TEST_CASE("concurrent requests for a tag share one fetch") {
  serve::TagCache cache(60s, std::chrono::steady_clock::now);
  std::atomic<int> fetches{0};
  std::atomic<bool> release{false};
  const auto slow = [&] {
    ++fetches;
    while (!release) std::this_thread::sleep_for(1ms);
    return Result<serve::SharedOutcome>(judged("shared"));
  };
  std::vector<std::thread> threads;
  std::atomic<int> right{0};
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&] {
      if (auto outcome = cache.get("tag", slow); outcome && (*outcome)->answer->variant == "shared") ++right;
    });
  }
  std::this_thread::sleep_for(50ms);
  release = true;
  for (auto& thread : threads) thread.join();
  CHECK(fetches == 1);
  CHECK(right == 32);
}

TEST_CASE("clear forgets answers, and a fetch under way at the time is not kept") {
  Clock clock;
  serve::TagCache cache(60s, clock.function());
  CountingFetch counting;
  const auto fetch = [&] { return counting(); };
  CHECK((*cache.get("k", fetch))->answer->variant == "v1");
  cache.clear();
  CHECK((*cache.get("k", fetch))->answer->variant == "v2");
  const auto clearing = [&] {
    cache.clear();  // the facts changed while this fetch ran
    return Result<serve::SharedOutcome>(judged("stale"));
  };
  CHECK((*cache.get("c", clearing))->answer->variant == "stale");
  CHECK((*cache.get("c", fetch))->answer->variant == "v3");
}

TEST_CASE("expired entries are swept: one per forwarded token does not pile up") {
  Clock clock;
  serve::TagCache cache(1s, clock.function());
  const auto fetch = [] { return Result<serve::SharedOutcome>(judged("v")); };
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(cache.get("token-" + std::to_string(i), fetch));
    clock.now += 100ms;
  }
  CHECK(cache.size() < 300);
}
