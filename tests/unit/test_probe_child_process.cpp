#include <chrono>
#include <csignal>

#include <unistd.h>

#include <doctest/doctest.h>

#include "hwimg/probe/child_process.hpp"

using namespace hwimg::probe;
using namespace std::chrono_literals;

TEST_CASE("a child's answer comes back through the pipe") {
  const auto answer = run_in_child([] { return std::string(100000, 'x'); }, 5000ms);
  REQUIRE_MESSAGE(answer.has_value(), answer.error().message);
  CHECK(answer->size() == 100000);
}

TEST_CASE("a child that hangs is killed at the deadline") {
  const auto answer = run_in_child(
      [] {
        ::pause();
        return std::string("never");
      },
      200ms);
  REQUIRE_FALSE(answer.has_value());
  CHECK(answer.error().message == "timed out after 200 ms");
}

TEST_CASE("a child that crashes is reported with its signal") {
  const auto answer = run_in_child(
      [] {
        ::kill(::getpid(), SIGKILL);
        return std::string();
      },
      5000ms);
  REQUIRE_FALSE(answer.has_value());
  CHECK(answer.error().message == "the probe process was killed by signal 9");
}
