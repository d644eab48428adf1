#include "hwimg/probe/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwimg/util/fd.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/pipe_reader.hpp"

namespace hwimg::probe {
namespace {

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const auto written = ::write(fd, data.data() + done, data.size() - done);
    if (written < 0 && errno == EINTR) {
      continue;
    }
    if (written <= 0) {
      return;
    }
    done += static_cast<std::size_t>(written);
  }
}

// Kills the child and reaps it if it goes within a moment; otherwise it stays a zombie until we exit.
void abandon(pid_t pid) {
  ::kill(pid, SIGKILL);
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (::waitpid(pid, nullptr, WNOHANG) != 0) {
      return;
    }
    ::usleep(1000);
  }
}

}  // namespace

Result<std::string> run_in_child(const std::function<std::string()>& body, std::chrono::milliseconds timeout) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return fail("failed to create a pipe: {}", util::errno_text(errno));
  }
  util::UniqueFd read_end(fds[0]);
  util::UniqueFd write_end(fds[1]);
  const pid_t pid = ::fork();
  if (pid < 0) {
    return fail("failed to start a probe process: {}", util::errno_text(errno));
  }
  if (pid == 0) {
    read_end.reset();
    write_all(write_end.get(), body());
    ::_exit(0);
  }
  write_end.reset();

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string output;
  const util::PipeSource source{read_end.get(), [&](std::string_view data) { output += data; }};
  const auto read = util::read_pipes_until({&source, 1}, deadline);
  if (read.end == util::PipeEnd::timed_out) {
    abandon(pid);
    return fail("timed out after {} ms", timeout.count());
  }
  if (read.end == util::PipeEnd::failed) {
    abandon(pid);
    return fail("failed to wait for the probe process: {}", util::errno_text(read.error_number));
  }

  // The pipe closes when the child exits; keep to the deadline in case something else held it.
  int status = 0;
  while (true) {
    const auto reaped = ::waitpid(pid, &status, WNOHANG);
    if (reaped == pid) {
      break;
    }
    if (reaped < 0 && errno != EINTR) {
      return fail("failed to wait for the probe process: {}", util::errno_text(errno));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      abandon(pid);
      return fail("timed out after {} ms", timeout.count());
    }
    ::usleep(200);
  }
  if (WIFSIGNALED(status)) {
    return fail("the probe process was killed by signal {}", WTERMSIG(status));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return fail("the probe process exited with status {}", WEXITSTATUS(status));
  }
  return output;
}

}  // namespace hwimg::probe
