// InterruptForwarding (util/interrupts.hpp) as hwimg build uses it, in a forked copy of this test
// process (the signal ends it): on a first SIGINT the running child finishes and no other starts;
// a second one reaches the child's group as SIGTERM, whose handler (it must see SIGTERM unblocked)
// runs before hwimg ends, by SIGINT.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwimg/util/files.hpp"
#include "hwimg/util/interrupts.hpp"
#include "hwimg/util/process.hpp"

using namespace hwimg;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

bool wait_for_file(const fs::path& path, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(20ms);
  }
  return fs::exists(path);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The stand-in for hwimg build, forked: forwarding on, a child running `script` ($1: a file it
// creates once its trap is set, $2: the file it reports to), then, when that returns, a second
// child that must not start. What the stand-in says goes to `said`.
struct ForkedBuild {
  util::TempDir scratch;
  fs::path ready = scratch.path() / "ready";
  fs::path report = scratch.path() / "report";
  fs::path second = scratch.path() / "second";
  fs::path said = scratch.path() / "stderr";
  pid_t pid = -1;

  explicit ForkedBuild(util::TempDir directory) : scratch(std::move(directory)) {}

  // Started, and its child's trap set.
  void start(const std::string& script) {
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) run(script);
    REQUIRE(wait_for_file(ready, 10s));
  }

  [[noreturn]] void run(const std::string& script) const {
    const int output = ::open(said.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (output < 0 || ::dup2(output, STDERR_FILENO) < 0) ::_exit(4);
    {
      const util::InterruptForwarding interrupts(10s);
      util::ProcessSpec spec;
      spec.argv = {"/bin/sh", "-c", script, "sh", ready.string(), report.string()};
      [[maybe_unused]] const auto first = util::run_process(spec);
      spec.argv = {"/bin/sh", "-c", "touch \"$1\"", "sh", second.string()};
      [[maybe_unused]] const auto refused = util::run_process(spec);
    }
    // Not reached: the interrupt ends this process, at the latest when the forwarding ends.
    ::_exit(3);
  }

  void expect_ended_by_sigint() const {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGINT);
    CHECK_FALSE(fs::exists(second));
  }
};

ForkedBuild forked_build() {
  auto scratch = util::TempDir::create(fs::temp_directory_path(), "hwimg-interrupts-");
  REQUIRE(scratch.has_value());
  return ForkedBuild(std::move(*scratch));
}

}  // namespace

TEST_CASE("interrupts: on SIGINT the running child finishes undisturbed, no new one starts, and hwimg ends by SIGINT") {
  auto build = forked_build();
  build.start("trap 'echo terminated > \"$2\"; exit 143' TERM; touch \"$1\"; sleep 0.5; echo finished > \"$2\"");
  REQUIRE(::kill(build.pid, SIGINT) == 0);
  build.expect_ended_by_sigint();
  CHECK(read_text(build.report) == "finished\n");
  CHECK(read_text(build.said) == "hwimg: interrupted: letting 1 running step finish; interrupt again to stop it now\n");
}

TEST_CASE("interrupts: a second SIGINT reaches the running child's group as SIGTERM, which it handles before hwimg ends") {
  auto build = forked_build();
  const auto started = std::chrono::steady_clock::now();
  build.start("trap 'sleep 0.3; echo cleaned > \"$2\"; exit 143' TERM; touch \"$1\"; sleep 30 & wait");
  REQUIRE(::kill(build.pid, SIGINT) == 0);
  std::this_thread::sleep_for(300ms);
  REQUIRE(::kill(build.pid, SIGINT) == 0);
  build.expect_ended_by_sigint();
  // The child ran its handler to the end: SIGTERM was not blocked in it (hwimg blocks it for
  // itself), else the grace period (10 s), SIGKILL and no file.
  CHECK(read_text(build.report) == "cleaned\n");
  CHECK(std::chrono::steady_clock::now() - started < 8s);
}

TEST_CASE("interrupts: without an interrupt, children run as before and the forwarding thread ends with it") {
  const util::InterruptForwarding interrupts(10s);
  util::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "trap 'echo term' TERM; kill -TERM $$; echo after"};
  const auto result = util::run_process(spec);
  REQUIRE(result.has_value());
  // The child's SIGTERM is its own to handle: not blocked by the mask hwimg holds meanwhile.
  CHECK(result->output == "term\nafter\n");
  CHECK(result->exit_status == 0);
  CHECK_FALSE(util::child_groups::stopping());
}
