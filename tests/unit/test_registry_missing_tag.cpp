// What hwimg says for a tag the registry does not have (registry/missing_tag.hpp): the tags it
// has, nearest to the one asked for first, at most five named and the rest counted, and the
// command that lists them all; a repository without tags says so.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "hwimg/registry/missing_tag.hpp"

using namespace hwimg;

TEST_CASE("registry missing tag: nearest tags first, capped, with the command that lists them") {
  const std::vector<std::string> tags{"latest", "1.0", "1.0-cpu-x86-64-v3", "2.0"};
  CHECK(registry::missing_tag_message("1.1", "reg:5000/stencil", "HTTP 404 MANIFEST_UNKNOWN", tags) ==
        "no tag 1.1 in reg:5000/stencil (HTTP 404 MANIFEST_UNKNOWN); it has 1.0, 2.0, latest, 1.0-cpu-x86-64-v3 "
        "(hwimg ls reg:5000/stencil)");
  CHECK(registry::missing_tag_message("1.1", "reg:5000/stencil", "HTTP 404 MANIFEST_UNKNOWN", tags, 2) ==
        "no tag 1.1 in reg:5000/stencil (HTTP 404 MANIFEST_UNKNOWN); it has 1.0, 2.0 and 2 more "
        "(hwimg ls reg:5000/stencil)");
  CHECK(registry::missing_tag_message("1.1", "reg:5000/empty", "HTTP 404 MANIFEST_UNKNOWN", {}) ==
        "no tag 1.1 in reg:5000/empty (HTTP 404 MANIFEST_UNKNOWN); the repository has no tags");
}

TEST_CASE("a missing repository is answered with the nearest names in the catalogue") {
  const std::vector<std::string> names{"other/app", "team/stencil", "demo/stencil", "x"};
  CHECK(registry::missing_repository_message("reg:5000", "demo/stencl", "HTTP 404 NAME_UNKNOWN", names, 2) ==
        "no repository reg:5000/demo/stencl (HTTP 404 NAME_UNKNOWN); nearest in reg:5000's catalogue: demo/stencil, "
        "team/stencil");
  CHECK(registry::missing_repository_message("reg:5000", "app", "HTTP 404 NAME_UNKNOWN", {}) ==
        "no repository reg:5000/app (HTTP 404 NAME_UNKNOWN); reg:5000's catalogue lists none");
}
