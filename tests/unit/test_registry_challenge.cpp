#include <doctest/doctest.h>

#include "hwimg/registry/detail/challenge.hpp"

using namespace hwimg::registry;

TEST_CASE("bearer challenge with quoted values holding commas and spaces") {
  const auto challenges = parse_challenges(
      R"(Bearer realm="https://auth.example.test/token",service="registry.example.test",)"
      R"(scope="repository:test/app:pull,push repository:other/repo:pull")");
  REQUIRE(challenges.size() == 1);
  CHECK(challenges[0].scheme == "bearer");
  CHECK(challenges[0].param("realm") == "https://auth.example.test/token");
  CHECK(challenges[0].param("service") == "registry.example.test");
  CHECK(challenges[0].param("scope") == "repository:test/app:pull,push repository:other/repo:pull");
}

TEST_CASE("basic challenge, escapes, case and several challenges in one header") {
  auto c = parse_challenges(R"(Basic realm="hwimg-test")");
  REQUIRE(c.size() == 1);
  CHECK(c[0].scheme == "basic");
  CHECK(c[0].param("realm") == "hwimg-test");

  c = parse_challenges(R"(BASIC Realm = "a \"quoted\" realm", Bearer realm=https://x/t, error="invalid_token")");
  REQUIRE(c.size() == 2);
  CHECK(c[0].param("realm") == "a \"quoted\" realm");
  CHECK(c[1].scheme == "bearer");
  CHECK(c[1].param("realm") == "https://x/t");
  CHECK(c[1].param("error") == "invalid_token");
}

TEST_CASE("scopes joined by spaces or commas") {
  CHECK(split_scopes("repository:a:pull,push repository:b:pull") ==
        std::vector<std::string>{"repository:a:pull,push", "repository:b:pull"});
  CHECK(split_scopes("repository:a:pull,push,repository:b:pull") ==
        std::vector<std::string>{"repository:a:pull,push", "repository:b:pull"});
  CHECK(split_scopes("repository:host:5000/a:pull") == std::vector<std::string>{"repository:host:5000/a:pull"});
  CHECK(split_scopes("").empty());
}

TEST_CASE("merging scopes unions the actions per resource") {
  CHECK(merge_scopes({"repository:a:pull"}, {"repository:a:push", "repository:b:pull"}) ==
        std::vector<std::string>{"repository:a:pull,push", "repository:b:pull"});
  CHECK(merge_scopes({"repository:host:5000/a:pull,push"}, {"repository:host:5000/a:pull"}) ==
        std::vector<std::string>{"repository:host:5000/a:pull,push"});
}
