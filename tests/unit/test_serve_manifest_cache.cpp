// The mirror's cache of variant manifests by digest: found once kept, bounded in bytes with the
// oldest going first, and a manifest larger than the whole cache never kept.

#include <string>

#include <doctest/doctest.h>

#include "hwimg/serve/manifest_cache.hpp"

using hwimg::serve::ManifestCache;

TEST_CASE("manifests kept by key are found again; the oldest go when the bytes run out") {
  ManifestCache cache(10);
  CHECK_FALSE(cache.find("reg/app@sha256:a"));
  cache.keep("reg/app@sha256:a", "aaaa");
  cache.keep("reg/app@sha256:b", "bbbb");
  CHECK(cache.find("reg/app@sha256:a") == "aaaa");
  CHECK(cache.find("reg/other@sha256:a") == std::nullopt);  // another repository is another key
  cache.keep("reg/app@sha256:c", "cccc");                    // 12 bytes: a goes
  CHECK_FALSE(cache.find("reg/app@sha256:a"));
  CHECK(cache.find("reg/app@sha256:b") == "bbbb");
  CHECK(cache.find("reg/app@sha256:c") == "cccc");
  CHECK(cache.size() == 2);
  cache.keep("reg/app@sha256:big", std::string(11, 'x'));  // larger than the cache: not kept, nothing lost
  CHECK_FALSE(cache.find("reg/app@sha256:big"));
  CHECK(cache.size() == 2);
}
