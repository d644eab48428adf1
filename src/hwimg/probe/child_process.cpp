#include "hwimg/probe/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwimg/util/fd.hpp"
#include "hwimg/util/files.hpp"

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
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      abandon(pid);
      return fail("timed out after {} ms", timeout.count());
    }
    pollfd poll_fd{read_end.get(), POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready < 0) {
      abandon(pid);
      return fail("failed to wait for the probe process: {}", util::errno_text(errno));
    }
    if (ready == 0) {
      continue;
    }
    const auto got = ::read(read_end.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      break;
    }
    output.append(buffer, static_cast<std::size_t>(got));
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
