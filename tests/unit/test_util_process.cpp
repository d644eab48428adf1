// The process runner (util/process.hpp) with real children (/bin/sh): stdout and stderr merged in
// the order written or kept apart, large outputs on both streams at once without a stall, the
// tail kept when output runs over, the deadline, exit statuses and signals, stdin, and a command
// that does not exist.
#include <doctest/doctest.h>

#include <chrono>

#include "hwimg/util/process.hpp"

using namespace hwimg;
using namespace std::chrono_literals;

namespace {

util::ProcessSpec shell(std::string script) {
  util::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", std::move(script)};
  spec.timeout = 20s;
  return spec;
}

}  // namespace

TEST_CASE("process: stdout and stderr are one stream in the order written, unless asked apart") {
  auto spec = shell("echo out1; echo err1 >&2; echo out2; echo err2 >&2");
  const auto merged = util::run_process(spec);
  REQUIRE(merged.has_value());
  CHECK(merged->exit_status == 0);
  CHECK(merged->output == "out1\nerr1\nout2\nerr2\n");
  CHECK(merged->error_output.empty());

  spec.standard_error = util::StandardError::separate;
  const auto separate = util::run_process(spec);
  REQUIRE(separate.has_value());
  CHECK(separate->output == "out1\nout2\n");
  CHECK(separate->error_output == "err1\nerr2\n");
}

TEST_CASE("process: a child that fills stderr while stdout is read does not stall, and each keeps its tail") {
  // 1 MiB on each stream, far past a pipe's 64 KiB: were one stream read only after the other ended,
  // the child would block on the full pipe and the deadline would end it.
  auto spec = shell("head -c 1048576 /dev/zero | tr '\\0' e >&2; head -c 1048576 /dev/zero | tr '\\0' o; "
                    "echo ' last-err' >&2; echo ' last-out'");
  spec.standard_error = util::StandardError::separate;
  spec.max_output = 1000;
  const auto result = util::run_process(spec);
  REQUIRE(result.has_value());
  CHECK_FALSE(result->timed_out);
  CHECK(result->exit_status == 0);
  CHECK(result->output.size() == 1000);
  CHECK(result->output.ends_with("o last-out\n"));
  CHECK(result->error_output.size() == 1000);
  CHECK(result->error_output.ends_with("e last-err\n"));
}

TEST_CASE("process: exit status, death by signal, and the deadline") {
  const auto exited = util::run_process(shell("exit 3"));
  REQUIRE(exited.has_value());
  CHECK(exited->exit_status == 3);

  const auto killed = util::run_process(shell("kill -TERM $$"));
  REQUIRE(killed.has_value());
  CHECK(killed->exit_status == 128 + 15);

  // The grandchild (sleep) holds the pipe too: the whole group is killed, not only the shell.
  auto slow = shell("echo started; sleep 30");
  slow.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  const auto timed_out = util::run_process(slow);
  REQUIRE(timed_out.has_value());
  CHECK(timed_out->timed_out);
  CHECK(timed_out->output == "started\n");
  CHECK(std::chrono::steady_clock::now() - start < 15s);
}

TEST_CASE("process: stdin is what the spec gives, or empty") {
  auto spec = shell("cat");
  spec.standard_input = "secret\n";
  const auto given = util::run_process(spec);
  REQUIRE(given.has_value());
  CHECK(given->output == "secret\n");
  const auto none = util::run_process(shell("cat; echo end"));
  REQUIRE(none.has_value());
  CHECK(none->output == "end\n");
}

TEST_CASE("process: a command that does not exist is an error naming it") {
  util::ProcessSpec spec;
  spec.argv = {"/nonexistent/hwimg-no-such-tool"};
  for (const auto standard_error : {util::StandardError::merged, util::StandardError::separate}) {
    spec.standard_error = standard_error;
    const auto result = util::run_process(spec);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().message == "failed to run /nonexistent/hwimg-no-such-tool: command not found");
  }
}
