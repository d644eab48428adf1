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

// Forks the stand-in for hwimg build: forwarding on, the child `script` ($1, $2: the paths given),
// then, when that returns, a second child that must not start. Never returns in the fork.
pid_t fork_hwimg(const std::string& script, const fs::path& one, const fs::path& two, const fs::path& second) {
  const pid_t hwimg = ::fork();
  if (hwimg != 0) return hwimg;
  // What it says goes to a file next to `second`.
  const int said = ::open((second.string() + ".stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (said < 0 || ::dup2(said, STDERR_FILENO) < 0) ::_exit(4);
  {
    const util::InterruptForwarding interrupts(10s);
    util::ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", script, "sh", one.string(), two.string()};
    [[maybe_unused]] const auto first = util::run_process(spec);
    spec.argv = {"/bin/sh", "-c", "touch \"$1\"", "sh", second.string()};
    [[maybe_unused]] const auto refused = util::run_process(spec);
  }
  // Not reached: the interrupt ends this process, at the latest when the forwarding ends.
  ::_exit(3);
}

void expect_ended_by_sigint(pid_t hwimg) {
  int status = 0;
  REQUIRE(::waitpid(hwimg, &status, 0) == hwimg);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
}

}  // namespace

TEST_CASE("interrupts: on SIGINT the running child finishes undisturbed, no new one starts, and hwimg ends by SIGINT") {
  auto scratch = util::TempDir::create(fs::temp_directory_path(), "hwimg-interrupts-");
  REQUIRE(scratch.has_value());
  const auto ready = scratch->path() / "ready";
  const auto result = scratch->path() / "result";
  const auto second = scratch->path() / "second";
  const pid_t hwimg = fork_hwimg("trap 'echo terminated > \"$2\"; exit 143' TERM; touch \"$1\"; sleep 0.5; echo finished > \"$2\"",
                                 ready, result, second);
  REQUIRE(hwimg > 0);
  REQUIRE(wait_for_file(ready, 10s));
  REQUIRE(::kill(hwimg, SIGINT) == 0);
  expect_ended_by_sigint(hwimg);
  CHECK(read_text(result) == "finished\n");
  CHECK_FALSE(fs::exists(second));
  CHECK(read_text(second.string() + ".stderr") ==
        "hwimg: interrupted: letting 1 running step finish; interrupt again to stop it now\n");
}

TEST_CASE("interrupts: a second SIGINT reaches the running child's group as SIGTERM, which it handles before hwimg ends") {
  auto scratch = util::TempDir::create(fs::temp_directory_path(), "hwimg-interrupts-");
  REQUIRE(scratch.has_value());
  const auto ready = scratch->path() / "ready";
  const auto cleaned = scratch->path() / "cleaned";
  const auto second = scratch->path() / "second";
  const auto started = std::chrono::steady_clock::now();
  const pid_t hwimg = fork_hwimg("trap 'sleep 0.3; echo cleaned > \"$2\"; exit 143' TERM; touch \"$1\"; sleep 30 & wait",
                                 ready, cleaned, second);
  REQUIRE(hwimg > 0);
  REQUIRE(wait_for_file(ready, 10s));
  REQUIRE(::kill(hwimg, SIGINT) == 0);
  std::this_thread::sleep_for(300ms);
  REQUIRE(::kill(hwimg, SIGINT) == 0);
  expect_ended_by_sigint(hwimg);
  // The child ran its handler to the end: SIGTERM was not blocked in it (hwimg blocks it for
  // itself), else the grace period (10 s), SIGKILL and no file.
  CHECK(read_text(cleaned) == "cleaned\n");
  CHECK_FALSE(fs::exists(second));
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
