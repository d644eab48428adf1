// The variant builder's shared parts: LayerMemo packs a variant-independent layer once per key
// however many variants ask for it at once, and the RFC 3339 times of configs and annotations.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "hwimg/build/variant_builder.hpp"

using namespace hwimg;

namespace {

oci::WrittenLayer layer_named(const std::string& name) {
  oci::WrittenLayer layer;
  layer.descriptor = {std::string(oci::media_type::layer_gzip), oci::Digest::sha256_of(name), 10, {}, {}};
  layer.diff_id = oci::Digest::sha256_of(name + " uncompressed");
  layer.uncompressed_size = 20;
  return layer;
}

}  // namespace

TEST_CASE("LayerMemo packs each key once while many variants ask for it at once") {
  build::LayerMemo memo;
  std::atomic<int> packs{0};
  std::atomic<int> waiting{0};
  constexpr int threads_per_key = 8;
  const auto pack_for = [&](const std::string& key) {
    return [&packs, &waiting, key]() -> Result<oci::WrittenLayer> {
      ++packs;
      // Hold the pack until every caller has asked (or a second has passed), so the others wait on it.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (waiting.load() < 2 * threads_per_key && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return layer_named(key);
    };
  };
  std::vector<Result<oci::WrittenLayer>> results(std::size_t{2} * threads_per_key, fail("not run"));
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < 2 * threads_per_key; ++i) {
      threads.emplace_back([&, i] {
        const std::string key = i % 2 == 0 ? "data -> /opt/data" : "share -> /usr/share";
        ++waiting;
        results[static_cast<std::size_t>(i)] = memo.get_or_pack(key, pack_for(key));
      });
    }
  }
  CHECK(packs.load() == 2);
  for (std::size_t i = 0; i < results.size(); ++i) {
    REQUIRE(results[i].has_value());
    const auto expected = layer_named(i % 2 == 0 ? "data -> /opt/data" : "share -> /usr/share");
    CHECK(results[i]->descriptor == expected.descriptor);
    CHECK(results[i]->diff_id == expected.diff_id);
  }

  // A later variant gets the layer packed before without packing again.
  const auto later = memo.get_or_pack("data -> /opt/data", [&]() -> Result<oci::WrittenLayer> {
    ++packs;
    return layer_named("other");
  });
  REQUIRE(later.has_value());
  CHECK(later->descriptor.digest == oci::Digest::sha256_of("data -> /opt/data"));
  CHECK(packs.load() == 2);
}

TEST_CASE("LayerMemo hands a failed pack's error to every variant that shares the key") {
  build::LayerMemo memo;
  int packs = 0;
  const auto failing = [&]() -> Result<oci::WrittenLayer> {
    ++packs;
    return fail("failed to pack /srv/data: permission denied");
  };
  const auto first = memo.get_or_pack("data", failing);
  const auto second = memo.get_or_pack("data", failing);
  REQUIRE_FALSE(first.has_value());
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error().message == "failed to pack /srv/data: permission denied");
  CHECK(packs == 1);
  CHECK(memo.get_or_pack("other", [] { return Result<oci::WrittenLayer>(layer_named("other")); }).has_value());
}

TEST_CASE("rfc3339 writes UTC seconds") {
  CHECK(build::rfc3339(0) == "1970-01-01T00:00:00Z");
  CHECK(build::rfc3339(1700000000) == "2023-11-14T22:13:20Z");
}
