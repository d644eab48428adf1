#include <doctest/doctest.h>

#include "hwimg/util/strings.hpp"

using namespace hwimg::util;

TEST_CASE("split keeps empty fields") {
  CHECK(split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(split("", ',') == std::vector<std::string>{""});
}

TEST_CASE("nearest suggests a close name and nothing for a distant one") {
  const std::vector<std::string> names{"sm_80", "sm_86", "sm_90", "compute_90"};
  CHECK(nearest("sm_8O", names) == "sm_80");
  CHECK(did_you_mean("sm_9O", names) == " (did you mean sm_90?)");
  CHECK_FALSE(nearest("banana", names).has_value());
}

TEST_CASE("tail_lines keeps the last lines of a command's output") {
  CHECK(tail_lines("a\nb\nc\nd\n", 2) == "c\nd");
  CHECK(tail_lines("only", 3) == "only");
}
