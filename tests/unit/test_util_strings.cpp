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

TEST_CASE("nearest breaks a tie in distance by the longer common start, then the nearer character") {
  // Each pair is one edit away; the list order used to decide, suggesting sm_61 for sm_91.
  const std::vector<std::string> gpus{"sm_61", "sm_80", "sm_86", "sm_90"};
  CHECK(nearest("sm_91", gpus) == "sm_90");
  CHECK(nearest("sm_85", gpus) == "sm_86");
  const std::vector<std::string> levels{"x86-64-v1", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  CHECK(nearest("x86-64-v5", levels) == "x86-64-v4");
  CHECK(nearest("X86-64-V0", levels) == "x86-64-v1");
  const std::vector<std::string> zens{"zen", "zen2", "zen3", "zen4", "zen5"};
  CHECK(nearest("zen6", zens) == "zen5");
  // A closer name still wins over a longer common start.
  const std::vector<std::string> close{"abcdxx", "abyd"};
  CHECK(nearest("abcd", close) == "abyd");
}

TEST_CASE("tail_lines keeps the last lines of a command's output") {
  CHECK(tail_lines("a\nb\nc\nd\n", 2) == "c\nd");
  CHECK(tail_lines("only", 3) == "only");
}

TEST_CASE("join_at_most lists the first parts and counts the rest") {
  const std::vector<std::string> parts{"a", "b", "c", "d"};
  CHECK(hwimg::util::join_at_most(parts, "\n", 4) == "a\nb\nc\nd");
  CHECK(hwimg::util::join_at_most(parts, "\n", 2) == "a\nb\n... and 2 more");
  CHECK(hwimg::util::join_at_most({}, "\n", 2).empty());
}

TEST_CASE("printable keeps quoted text on one line") {
  CHECK(hwimg::util::printable("plain text: ok") == "plain text: ok");
  CHECK(hwimg::util::printable("a\nb\r\tc") == "a\\nb\\r\\tc");
  CHECK(hwimg::util::printable(std::string("\x1b[31m\0x\x7f", 8)) == "\\x1b[31m\\x00x\\x7f");
  CHECK(hwimg::util::printable("caf\xc3\xa9") == "caf\xc3\xa9");  // UTF-8 stays as it is
}
